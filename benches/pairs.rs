//! sereal's serde path against rmp-serde and serde_json on the seed
//! datasets and the 10,000 records, timed in interleaved pairs: each round
//! times a batch of sereal calls and a batch of the peer's, in alternating
//! order, and the ratio of the two is one sample. The line gives the median
//! of the rounds' ratios with its 95% interval (the order statistics that
//! bound a median, from the binomial distribution), so a load that comes
//! and goes on a shared machine moves both sides of a ratio alike.
//!
//! `cargo bench --bench pairs` runs everything; `cargo bench --bench pairs
//! -- decode/undef` only the lines whose name contains the argument.

#[path = "support/datasets.rs"]
mod datasets;
#[path = "support/pair.rs"]
mod pair;
#[path = "support/peers.rs"]
mod peers;
#[path = "support/records.rs"]
mod records;

use pair::pair;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::hint::black_box;

/// The peers sereal is paired with.
const PEERS: [&str; 2] = ["rmp_serde", "serde_json"];

struct Pairs {
    filter: Option<String>,
}

impl datasets::Each for Pairs {
    fn run<T: Serialize + DeserializeOwned>(&mut self, name: &str, data: T) {
        let wanted = |line: &str| self.filter.as_ref().is_none_or(|f| line.contains(f));
        let encoders = peers::encoders::<T>();
        let decoders = peers::decoders::<T>();
        assert_eq!(encoders[0].0, "sereal", "sereal is the first peer");
        // Every codec is called through an opaque pointer: timed as it is
        // compiled on its own, not as one bench loop or another inlines it.
        let (enc, dec) = (black_box(encoders[0].1), black_box(decoders[0].1));
        let doc = enc(&data);
        for peer in PEERS {
            let i = encoders
                .iter()
                .position(|(p, _)| *p == peer)
                .expect("a peer");
            let (their_enc, their_dec) = (black_box(encoders[i].1), black_box(decoders[i].1));
            let line = format!("encode/{name}");
            if wanted(&line) {
                pair(
                    &line,
                    peer,
                    &mut || drop(black_box(enc(black_box(&data)))),
                    &mut || drop(black_box(their_enc(black_box(&data)))),
                );
            }
            let line = format!("decode/{name}");
            if wanted(&line) {
                let theirs = their_enc(&data);
                pair(
                    &line,
                    peer,
                    &mut || drop(black_box(dec(black_box(&doc)))),
                    &mut || drop(black_box(their_dec(black_box(&theirs)))),
                );
            }
        }
    }
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let mut p = Pairs { filter };
    datasets::each(&mut p);
    datasets::Each::run(&mut p, "records", records::records(10_000));
}
