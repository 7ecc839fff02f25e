//! A stream of concatenated documents read into serde values, cut into
//! pieces: the typed stream over a slice, over a reader handing out the
//! pieces, and `Incremental::next_as` fed them must yield the same values
//! with the same offsets, then the same error or the end; and each value
//! must be what `from_slice` reads from that document's bytes alone (a
//! stream reads a document open, finding its end itself, and falls back to
//! the scanner's bounds: both routes must agree, and a read through the
//! serde `Deserializer` trait, which takes the scanner's bounds, too).
#![no_main]

use libfuzzer_sys::fuzz_target;
#[path = "support/pieces.rs"]
mod pieces;
use pieces::Pieces;
use sereal::stream::Incremental;
use sereal::{DecoderOptions, Deserializer, Error, Value};

/// What a typed stream yielded: values with the offset after each, then
/// the error that ended it, if any.
type Outcome = (Vec<(Value, usize)>, Option<Error>);

fn collect(items: impl Iterator<Item = (sereal::Result<Value>, usize)>) -> Outcome {
    let mut out = (Vec::new(), None);
    for (r, at) in items {
        match r {
            Ok(v) => out.0.push((v, at)),
            Err(e) => {
                out.1 = Some(e);
                break;
            }
        }
    }
    out
}

fn same(a: &Outcome, b: &Outcome, how: &str) {
    assert_eq!(a.0.len(), b.0.len(), "{how}: value count");
    for ((x, xe), (y, ye)) in a.0.iter().zip(&b.0) {
        assert_eq!(xe, ye, "{how}: document end");
        assert!(x == y, "{how}: value differs");
    }
    let err = |o: &Outcome| o.1.as_ref().map(|e| (e.kind().clone(), e.offset()));
    assert_eq!(err(a), err(b), "{how}: error");
}

fuzz_target!(|data: &[u8]| {
    let Some((chunk, stream)) = pieces::split(data) else {
        return;
    };
    let opts = DecoderOptions::new()
        .max_uncompressed_size(16 << 20)
        .max_memory(64 << 20);
    let mut it = Deserializer::from_slice_with(stream, opts.clone()).into_iter::<Value>();
    let slice = collect(std::iter::from_fn(|| {
        let r = it.next()?;
        Some((r, it.byte_offset()))
    }));
    let reader = Deserializer::from_reader_with(Pieces { data: stream, chunk }, opts.clone());
    let mut it = reader.into_iter::<Value>();
    let read = collect(std::iter::from_fn(|| {
        let r = it.next()?;
        Some((r, it.byte_offset()))
    }));
    same(&slice, &read, "reader in pieces");
    let mut inc = Incremental::new(sereal::Decoder::new(opts.clone()));
    let mut items = Vec::new();
    for piece in stream.chunks(chunk) {
        inc.feed(piece);
        while let Some(r) = inc.next_as::<Value>() {
            items.push((r, inc.offset()));
        }
    }
    inc.finish();
    while let Some(r) = inc.next_as::<Value>() {
        items.push((r, inc.offset()));
    }
    same(&slice, &collect(items.into_iter()), "push decoder in pieces");
    // One document per `Value::deserialize(&mut de)` (the document's bounds
    // found by the scanner, not by the read): the same values and offsets.
    let mut de = Deserializer::from_slice_with(stream, opts.clone());
    let mut items = Vec::new();
    while de.byte_offset() < stream.len() {
        let r = <Value as serde::Deserialize>::deserialize(&mut de);
        let failed = r.is_err();
        items.push((r, de.byte_offset()));
        if failed {
            break;
        }
    }
    same(&slice, &collect(items.into_iter()), "one deserialize call a document");
    // Each value is what from_slice reads from the document alone.
    let mut start = 0;
    for (v, end) in &slice.0 {
        let alone = sereal::from_slice_with::<Value>(&stream[start..*end], opts.clone())
            .expect("a streamed document reads alone");
        assert!(&alone == v, "read alone it differs");
        start = *end;
    }
});
