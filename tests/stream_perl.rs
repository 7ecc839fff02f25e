//! The stream readers against Perl writing the stream into a pipe, a TCP
//! socket, or a buffer handed out in irregular pieces: every reader must
//! read every record Perl wrote, with the offsets Perl's document lengths
//! add up to (the producer: tests/perl_stream).

use sereal::stream::ReadDocuments;
use sereal::{Decoder, DecoderOptions};
use std::io::Read;
mod common;
mod perl_stream;
use common::perl_sereal;
use perl_stream::*;

/// Case 1, a pipe: Perl writes 12,000 documents to its stdout, read as they
/// come by the serde stream, the graph stream and the raw stream.
#[test]
fn pipe() {
    if !perl_sereal("stream_perl::pipe") {
        return;
    }
    // The serde stream.
    let mut child = spawn(N, "pipe-serde", &[]);
    let (got, err) = from_reader_recs(child.stdout.take().unwrap(), DecoderOptions::default());
    assert!(err.is_none(), "{err:?}");
    check("from_reader", &got, &finish(child, "pipe-serde"));

    // The graph stream.
    let mut child = spawn(N, "pipe-graph", &[]);
    let mut docs = ReadDocuments::new(child.stdout.take().unwrap(), Decoder::default());
    let mut got = Vec::new();
    while let Some(doc) = docs.next() {
        got.push((graph_rec(&doc.unwrap()), docs.offset()));
    }
    check("ReadDocuments", &got, &finish(child, "pipe-graph"));

    // The raw stream: each document read alone.
    let mut child = spawn(N, "pipe-raw", &[]);
    let mut docs = ReadDocuments::new(child.stdout.take().unwrap(), Decoder::default());
    let mut got = Vec::new();
    let mut lens = Vec::new();
    while let Some(raw) = docs.next_raw() {
        let raw = raw.unwrap();
        lens.push(raw.len());
        let rec = raw_rec(raw);
        got.push((rec, docs.offset()));
    }
    let perl = finish(child, "pipe-raw");
    assert_eq!(lens, perl.iter().map(|d| d.len).collect::<Vec<_>>());
    check("next_raw", &got, &perl);
}

/// A reader that counts the bytes it handed out, and notes where each
/// read ended.
struct Counting<R> {
    inner: R,
    handed: usize,
    ends: Vec<usize>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(out)?;
        self.handed += n;
        self.ends.push(self.handed);
        Ok(n)
    }
}

/// Case 2, TCP: Perl connects and writes the stream in irregular `syswrite`s
/// (1 byte, 7 bytes, 64 KiB, random sizes, with pauses), read as it
/// arrives by the serde stream.
#[test]
fn tcp() {
    if !perl_sereal("stream_perl::tcp") {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut child = spawn(N, "tcp", &[format!("port={port}")]);
    // Wait for Perl to connect, unless it fails first.
    listener.set_nonblocking(true).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let sock = loop {
        match listener.accept() {
            Ok((sock, _)) => break sock,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(
                    child.try_wait().unwrap().is_none(),
                    "perl ended before it connected"
                );
                assert!(std::time::Instant::now() < deadline, "perl did not connect");
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(e) => panic!("accept: {e}"),
        }
    };
    sock.set_nonblocking(false).unwrap();
    sock.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    let mut counting = Counting {
        inner: sock,
        handed: 0,
        ends: Vec::new(),
    };
    let (got, err) = from_reader_recs(&mut counting, DecoderOptions::default());
    assert!(err.is_none(), "{err:?}");
    let docs = finish(child, "tcp");
    check("from_reader over TCP", &got, &docs);
    assert_eq!(counting.handed, docs.iter().map(|d| d.len).sum::<usize>());
    // The bytes came in pieces, many of them ending inside a document.
    let starts = starts(&docs);
    let inside = counting
        .ends
        .iter()
        .filter(|e| starts.binary_search(e).is_err())
        .count();
    let sizes: Vec<usize> = counting
        .ends
        .iter()
        .scan(0, |at, &e| Some(e - std::mem::replace(at, e)))
        .collect();
    eprintln!(
        "tcp: {} reads, {inside} ending inside a document, the first {:?}",
        sizes.len(),
        &sizes[..8]
    );
    assert!(
        inside >= 10,
        "{} reads, {inside} inside a document",
        sizes.len()
    );
    // Perl pauses after its first writes (1, 7 bytes, ...): some reads are small.
    assert!(sizes.iter().any(|&n| n < 4096), "read sizes {sizes:?}");
}

/// Case 3: Perl's whole output in pieces of 1, 7, 4096, 65536 and random
/// sizes: pushed to an `Incremental` (`next_as`, `next_document`,
/// `next_raw`) and read by `from_reader` and `ReadDocuments::next_as`,
/// every reader yields the records `from_slice` yields, with offsets at
/// Perl's document lengths.
#[test]
fn irregular_pieces() {
    if !perl_sereal("stream_perl::irregular_pieces") {
        return;
    }
    let s = base();
    let all = &s.bytes[..];
    let opts = DecoderOptions::default;
    let (got, err) = from_slice_recs(all, opts());
    assert!(err.is_none(), "{err:?}");
    check("from_slice", &got, &s.docs);
    for pieces in Pieces::ALL {
        let cut = pieces.cut(all);
        for (name, take) in takes(all) {
            let (got, err) = push_recs(opts(), &cut, take);
            assert!(err.is_none(), "{name} {pieces:?}: {err:?}");
            check(&format!("Incremental::{name} in {pieces:?}"), &got, &s.docs);
        }
        let (got, err) = from_reader_recs(pieces.reader(all), opts());
        assert!(err.is_none(), "{err:?}");
        check(&format!("from_reader in {pieces:?}"), &got, &s.docs);
        let (got, err) = pull_recs(pieces.reader(all), opts());
        assert!(err.is_none(), "{err:?}");
        check(
            &format!("ReadDocuments::next_as in {pieces:?}"),
            &got,
            &s.docs,
        );
    }
}
