//! A tokio service reading records that a Perl program sends over TCP as
//! concatenated Sereal documents (some zstd, Snappy or zlib compressed):
//! `FramedRead` with `sereal::codec::SerealCodec` turns the socket into a
//! stream of structs, one per document, however the bytes arrive.
//!
//! ```sh
//! cargo run --example tokio_consumer --features tokio          # 10000 records
//! cargo run --example tokio_consumer --features tokio -- 50    # 50 records
//! ```
//!
//! It listens on 127.0.0.1 (a port the system picks) and starts
//! `perl examples/tokio_producer.pl PORT COUNT` as the producer. Without
//! Perl's Sereal (`apt-get install libsereal-perl`) it says so and plays
//! the producer itself. `tests/codec.rs` runs the same exchange and checks
//! every record.

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use sereal::codec::SerealCodec;
use sereal::{Compression, EncoderOptions};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::codec::FramedRead;

/// A record as the producer writes it.
#[derive(Serialize, Deserialize, Debug)]
struct Rec {
    id: u64,
    name: String,
    email: String,
    tags: Vec<String>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let count: u64 = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 10_000,
    };
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();

    // The producer: Perl if it has Sereal, else a task of ours.
    let mut perl = None;
    let mut producer = None;
    if perl_has_sereal() {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/tokio_producer.pl");
        let args = [script.to_string(), port.to_string(), count.to_string()];
        perl = Some(std::process::Command::new("perl").args(args).spawn()?);
    } else {
        println!("Perl's Sereal is not installed: producing the records here");
        producer = Some(tokio::spawn(produce(port, count)));
    }

    // The consumer: one `Rec` per document, as soon as its last byte is in.
    let (socket, peer) = listener.accept().await?;
    let mut records = FramedRead::new(socket, SerealCodec::<Rec>::default());
    let (mut n, mut checksum) = (0u64, 0u64);
    while let Some(rec) = records.next().await {
        let rec = rec?; // a sereal::Error, with its offset in the stream
        n += 1;
        checksum = checksum.wrapping_mul(31).wrapping_add(rec.id);
        checksum =
            checksum.wrapping_add((rec.name.len() + rec.email.len() + rec.tags.len()) as u64);
    }
    println!("{n} records from {peer}, checksum {checksum}");

    if let Some(mut perl) = perl {
        perl.wait()?;
    }
    if let Some(producer) = producer {
        producer.await??;
    }
    Ok(())
}

fn perl_has_sereal() -> bool {
    std::process::Command::new("perl")
        .args(["-MSereal::Encoder", "-e1"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// What `tokio_producer.pl` writes, written from Rust.
async fn produce(port: u16, count: u64) -> sereal::Result<()> {
    let mut socket = TcpStream::connect(("127.0.0.1", port)).await?;
    let compressions = [
        Compression::None,
        Compression::Zstd,
        Compression::Snappy,
        Compression::Zlib,
    ];
    for i in 1..=count {
        let rec = Rec {
            id: i,
            name: format!("user {i}"),
            email: format!("user{i}@example.com"),
            tags: (1..=i % 4).map(|t| format!("t{t}")).collect(),
        };
        let opts = EncoderOptions::new()
            .compress(compressions[i as usize % compressions.len()])
            .compress_threshold(0);
        socket.write_all(&sereal::to_vec_with(&rec, &opts)?).await?;
    }
    socket.shutdown().await?;
    Ok(())
}
