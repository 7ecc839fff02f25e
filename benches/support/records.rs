//! 10,000 derived structs shaped like bench_retention's records.

use serde::{Deserialize, Serialize};

/// A record's address.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct Address {
    pub city: String,
    pub zip: String,
}

/// One record.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct Record {
    pub id: u64,
    pub name: String,
    pub email: String,
    pub score: u64,
    pub active: u8,
    pub tags: Vec<String>,
    pub address: Address,
}

/// `n` records.
pub fn records(n: u64) -> Vec<Record> {
    (0..n)
        .map(|i| Record {
            id: i,
            name: format!("user{i}"),
            email: format!("user{i}@example.com"),
            score: 2 * i + 1,
            active: (i % 2) as u8,
            tags: vec![format!("t{}", i % 7), format!("t{}", i % 11)],
            address: Address {
                city: format!("city{}", i % 100),
                zip: format!("{:05}", i % 100_000),
            },
        })
        .collect()
}
