//! A Rust service sharing a Redis cache with a Perl one: Perl stores a
//! session as a Sereal blob (blessed objects, one team hash shared by two
//! users, zstd); this program reads it with serde into structs and as a
//! `sereal::Value`, moves the team to another plan and counts a visit, and
//! writes it back with the options Perl used, for Perl to read.
//!
//! ```sh
//! redis-server --port 6390 --save '' --appendonly no &   # or a Redis you have
//! export REDIS_SERVER=127.0.0.1:6390                     # for Perl's Redis module
//! perl examples/redis_cache.pl write                     # Perl SETs session:42
//! cargo run --example redis_cache -- redis://127.0.0.1:6390/
//! perl examples/redis_cache.pl read                      # Perl GETs the update
//! ```
//!
//! Without an argument it connects to `redis://127.0.0.1:6379/`.
//! `tests/redis_interop.rs` runs the same exchange and checks every value.

use redis::Commands;
use serde::Deserialize;
use sereal::{Compression, Encoder, EncoderOptions, Header};

const KEY: &str = "session:42";

// What this service needs of Perl's objects: serde reads a blessed hash as
// its hash and skips the keys a struct leaves out (`recent`, `avatar`, the
// team's weak `owner`).
#[derive(Deserialize, Debug)]
struct Session {
    id: u64,
    visits: u64,
    users: Vec<User>,
}

#[derive(Deserialize, Debug)]
struct User {
    id: u64,
    name: String,
    team: Team,
}

#[derive(Deserialize, Debug)]
struct Team {
    name: String,
    plan: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args().nth(1);
    let url = url.as_deref().unwrap_or("redis://127.0.0.1:6379/");
    let mut con = redis::Client::open(url)?.get_connection()?;
    let blob: Vec<u8> = con
        .get::<_, Option<Vec<u8>>>(KEY)?
        .ok_or("session:42 is not in Redis: run `perl examples/redis_cache.pl write` first")?;
    let header = Header::parse(&blob)?;
    println!(
        "rust: GET {KEY}, {} bytes, protocol {}, {:?}",
        blob.len(),
        header.version,
        header.compression
    );

    // Typed: serde reads a tree, so each user gets its own copy of the team.
    let session: Session = sereal::from_slice(&blob)?;
    println!("rust: session {}, {} visits", session.id, session.visits);
    for u in &session.users {
        println!(
            "rust: user {} {:?} in {:?} ({})",
            u.id, u.name, u.team.name, u.team.plan
        );
    }

    // As a graph: the team is one node both users hold, so changing it
    // through the first user changes it for the second, in Rust and, once
    // written back, in Perl.
    let doc = sereal::decode(&blob)?;
    let users = doc.get("users").ok_or("no users")?;
    let team = |i| users.at(i).and_then(|u| u.get("team")?.node());
    let (first, second) = (team(0).ok_or("no team")?, team(1).ok_or("no team")?);
    println!("rust: one team node: {}", first.ptr_eq(&second));
    first.hash_mut()?.insert("plan", "enterprise");
    let root = doc.node().ok_or("the session is not a reference")?;
    root.hash_mut()?.insert("visits", session.visits + 1);

    // Perl's options: `compress => Sereal::Encoder::SRL_ZSTD`.
    let opts = EncoderOptions::new().compress(Compression::Zstd);
    let out = Encoder::new(opts)?.encode(&doc)?;
    con.set::<_, _, ()>(KEY, &out)?;
    println!(
        "rust: SET {KEY}, {} bytes: team plan enterprise, {} visits",
        out.len(),
        session.visits + 1
    );
    Ok(())
}
