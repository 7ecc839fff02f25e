//! The view, merge and split against decoding, on bench_retention's
//! 200,000 records as Perl's Sereal writes them (Perl makes the document
//! when it is installed; otherwise this crate's encoder does, which writes
//! the same bytes for the same hash order), in interleaved pairs (see
//! support/pair.rs):
//!
//! - one field of the last record by path (`$[-1].email`), and every
//!   record's email (`$[*].email`), each read from a fresh view, against a
//!   full `decode` of the same bytes and a walk of the graph;
//! - the first tag of the last record, where the records share seven tag
//!   arrays (the second reference to each a `REFP`): a reference to a
//!   tracked array makes the view find the document's objects once, one
//!   walk of the whole body, against a full `decode` and a walk;
//! - a merge of 100 documents of 2,000 records each into one, against
//!   decoding each and encoding the array of them;
//! - a split of the whole document into chunks of 64 KiB, against
//!   decoding it and encoding each slice of as many records.
//!
//! Throughput is in MB/s of input. `cargo bench --bench view` runs every
//! line; an argument runs the lines whose name contains it. `--once` runs
//! each line's own side once, unpaired, for a profiler:
//! `valgrind --tool=callgrind target/release/deps/view-* all_emails --once`.

#[path = "support/pair.rs"]
mod pair;

use pair::pair;
use sereal::view::{merge, MergeOptions, Splitter, View};
use sereal::{decode, encode, Value};
use std::hint::black_box;

const COUNT: usize = 200_000;

/// The records document: Perl's bytes when Perl's Sereal is installed.
/// With `shared`, record `i`'s tags are the `i % 7`th of seven arrays.
fn records(shared: bool) -> Vec<u8> {
    let script = r#"
        use Sereal::Encoder;
        my @shared = map { ["t$_", "s$_"] } 0 .. 6;
        sub record { my ($i) = @_;
            return { id => $i, name => "user$i", email => "user$i\@example.com",
                     score => 2 * $i + 1, active => $i % 2,
                     tags => $ARGV[1] ? $shared[$i % 7] : ["t" . ($i % 7), "t" . ($i % 11)],
                     address => { city => "city" . ($i % 100), zip => sprintf("%05d", $i % 100000) } } }
        binmode STDOUT;
        print Sereal::Encoder->new({protocol_version => 5})->encode([map { record($_) } 0 .. $ARGV[0] - 1]);
    "#;
    let perl = std::process::Command::new("perl")
        .env("PERL_HASH_SEED", "0")
        .env("PERL_PERTURB_KEYS", "0")
        .args([
            "-e",
            script,
            &COUNT.to_string(),
            &u8::from(shared).to_string(),
        ])
        .output();
    if let Some(out) = perl
        .ok()
        .filter(|o| o.status.success() && !o.stdout.is_empty())
    {
        println!("records: Perl's document, {} bytes", out.stdout.len());
        return out.stdout;
    }
    println!("records: Perl's Sereal is not installed; this crate's encoder writes the document");
    let arrays: Vec<Value> = (0..7)
        .map(|j| Value::array([format!("t{j}"), format!("s{j}")]))
        .collect();
    let rows: Vec<Value> = (0..COUNT)
        .map(|i| {
            let tags = match shared {
                true => arrays[i % 7].clone(),
                false => Value::array([format!("t{}", i % 7), format!("t{}", i % 11)]),
            };
            sereal::sereal!({
                "id": i, "name": (format!("user{i}")), "email": (format!("user{i}@example.com")),
                "score": (2 * i + 1), "active": (i % 2),
                "tags": (tags),
                "address": {"city": (format!("city{}", i % 100)), "zip": (format!("{:05}", i % 100_000))}
            })
        })
        .collect();
    encode(&Value::array(rows)).unwrap()
}

fn mb_per_s(bytes: usize, ns: f64) -> f64 {
    bytes as f64 / ns * 1e3
}

/// Runs `ours` against `theirs` as [`pair`] does, or `ours` alone once.
fn measure(
    once: bool,
    line: &str,
    peer: &str,
    ours: &mut dyn FnMut(),
    theirs: &mut dyn FnMut(),
) -> (f64, f64) {
    if once {
        let t = std::time::Instant::now();
        ours();
        println!("{line:24} once: {:.2} ms", t.elapsed().as_secs_f64() * 1e3);
        return (f64::NAN, f64::NAN);
    }
    pair(line, peer, ours, theirs)
}

fn main() {
    let once = std::env::args().any(|a| a == "--once");
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let run = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    let doc = records(false);
    let last = format!("user{}@example.com", COUNT - 1);
    if run("view/last_field") {
        measure(
            once,
            "view/last_field",
            "decode",
            &mut || {
                let view = View::new(black_box(&doc)).unwrap();
                let found = view.select("$[-1].email").unwrap();
                black_box(found[0].as_str().unwrap().unwrap());
            },
            &mut || {
                let v = decode(black_box(&doc)).unwrap();
                let a = v.as_array().unwrap();
                black_box(a.last().unwrap().get("email").unwrap());
            },
        );
        let view = View::new(&doc).unwrap();
        assert_eq!(
            view.select("$[-1].email").unwrap()[0].as_str().unwrap(),
            Some(&last[..])
        );
    }
    if run("view/all_emails") {
        measure(
            once,
            "view/all_emails",
            "decode",
            &mut || {
                let view = View::new(black_box(&doc)).unwrap();
                let mut n = 0;
                for item in view.select("$[*].email").unwrap() {
                    n += item.as_str().unwrap().unwrap().len();
                }
                black_box(n);
            },
            &mut || {
                let v = decode(black_box(&doc)).unwrap();
                let mut n = 0;
                for r in v.as_array().unwrap().iter() {
                    n += r.get_ref("email").unwrap().as_bytes().unwrap().len();
                }
                black_box(n);
            },
        );
    }
    if run("view/shared_tag") {
        let shared = records(true);
        let first_tag = |v: &Value| {
            let last = v.as_array().unwrap().last().unwrap().clone();
            last.get("tags").unwrap().at(0).unwrap()
        };
        measure(
            once,
            "view/shared_tag",
            "decode",
            &mut || {
                let view = View::new(black_box(&shared)).unwrap();
                let found = view.select("$[-1].tags[0]").unwrap();
                black_box(found[0].as_str().unwrap().unwrap());
            },
            &mut || {
                black_box(first_tag(&decode(black_box(&shared)).unwrap()));
            },
        );
        let view = View::new(&shared).unwrap();
        let want = first_tag(&decode(&shared).unwrap());
        assert_eq!(
            view.select("$[-1].tags[0]").unwrap()[0].as_str().unwrap(),
            want.as_str()
        );
    }
    if run("merge") {
        let view = View::new(&doc).unwrap();
        let parts: Vec<Vec<u8>> = Splitter::new(view, doc.len() / 100 + 1)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let bytes: usize = parts.iter().map(Vec::len).sum();
        let opts = MergeOptions::new();
        let (ours, theirs) = measure(
            once,
            "merge/records",
            "decode+encode",
            &mut || {
                black_box(merge(black_box(&parts), &opts).unwrap());
            },
            &mut || {
                let all: Vec<Value> = parts
                    .iter()
                    .map(|p| decode(p).unwrap().into_value())
                    .collect();
                black_box(encode(&Value::array(all)).unwrap());
            },
        );
        println!(
            "merge/records            {} documents, {bytes} bytes: {:.0} MB/s, decode+encode {:.0} MB/s",
            parts.len(),
            mb_per_s(bytes, ours),
            mb_per_s(bytes, theirs)
        );
    }
    if run("split") {
        const CHUNK: usize = 64 << 10;
        let per_chunk = {
            let view = View::new(&doc).unwrap();
            let first = Splitter::new(view, CHUNK).unwrap().next().unwrap().unwrap();
            decode(&first).unwrap().as_array().unwrap().len()
        };
        let (ours, theirs) = measure(
            once,
            "split/records",
            "decode+encode",
            &mut || {
                let view = View::new(black_box(&doc)).unwrap();
                for chunk in Splitter::new(view, CHUNK).unwrap() {
                    black_box(chunk.unwrap());
                }
            },
            &mut || {
                let v = decode(black_box(&doc)).unwrap();
                let a = v.as_array().unwrap();
                let items: Vec<Value> = a.iter().cloned().collect();
                for slice in items.chunks(per_chunk) {
                    black_box(encode(&Value::array(slice.to_vec())).unwrap());
                }
            },
        );
        println!(
            "split/records            {per_chunk} records a chunk: {:.0} MB/s, decode+encode {:.0} MB/s",
            mb_per_s(doc.len(), ours),
            mb_per_s(doc.len(), theirs)
        );
    }
}
