//! A stream of concatenated documents, cut into pieces: the push decoder
//! (`Incremental`) and the reader iterator (`ReadDocuments`) must yield, for
//! any way of cutting the input, exactly what the push decoder yields when
//! it is given the whole stream at once (the same documents, then the same
//! error or the end). Each document must be yielded as soon as its last
//! byte is in, and `needed` must never promise less than the document
//! still takes.
#![no_main]

use libfuzzer_sys::fuzz_target;
#[path = "support/pieces.rs"]
mod pieces;
use pieces::Pieces;
use sereal::stream::Incremental;
use sereal::{Decoder, DecoderOptions, Document, Error};

/// What a stream decoder yielded: documents with their end offsets, then
/// the error that ended the stream, if any.
#[derive(Debug)]
struct Outcome {
    docs: Vec<(Document, usize)>,
    error: Option<Error>,
}

fn same(a: &Outcome, b: &Outcome, how: &str) {
    assert_eq!(a.docs.len(), b.docs.len(), "{how}: document count");
    for ((x, xe), (y, ye)) in a.docs.iter().zip(&b.docs) {
        assert_eq!(xe, ye, "{how}: document end");
        assert!(x == y, "{how}: document differs");
        assert_eq!(
            sereal::encode(x).ok(),
            sereal::encode(y).ok(),
            "{how}: bytes"
        );
    }
    let err = |o: &Outcome| o.error.as_ref().map(|e| (e.kind().clone(), e.offset()));
    assert_eq!(err(a), err(b), "{how}: error");
}

/// Takes out the documents `inc` holds after a feed that brought the bytes
/// fed from `prev` to `fed`, and notes what `needed` promises next.
fn drain(inc: &mut Incremental, out: &mut Outcome, prev: usize, fed: usize, promise: &mut usize) {
    while let Some(r) = inc.next_document() {
        match r {
            Ok(doc) => {
                let end = inc.offset();
                assert!(end <= fed, "a document ends past what was fed");
                assert!(end > prev, "a document was complete a feed earlier");
                assert!(end >= *promise, "needed() promised more than was taken");
                out.docs.push((doc, end));
            }
            Err(e) => out.error = Some(e),
        }
    }
    *promise = fed + inc.needed();
}

fuzz_target!(|data: &[u8]| {
    let Some((chunk, stream)) = pieces::split(data) else {
        return;
    };
    let dec = Decoder::new(DecoderOptions::new().max_uncompressed_size(16 << 20));
    let run = |pieces: &mut dyn Iterator<Item = &[u8]>| {
        let mut inc = dec.incremental();
        let mut out = Outcome {
            docs: Vec::new(),
            error: None,
        };
        let (mut fed, mut promise) = (0, 0);
        for piece in pieces {
            inc.feed(piece);
            let prev = fed;
            fed += piece.len();
            drain(&mut inc, &mut out, prev, fed, &mut promise);
            if out.error.is_some() {
                return out;
            }
        }
        inc.finish();
        // At the end of the input what is left is decoded whatever the
        // scan said (a protocol 1 Snappy document ends only there).
        drain(&mut inc, &mut out, 0, fed, &mut 0);
        out
    };
    let whole = run(&mut std::iter::once(stream));
    let cut_up = run(&mut stream.chunks(chunk));
    same(&whole, &cut_up, "push decoder in pieces");
    let mut read = Outcome {
        docs: Vec::new(),
        error: None,
    };
    let mut docs = dec.documents_from_reader(Pieces {
        data: stream,
        chunk,
    });
    while let Some(r) = docs.next() {
        match r {
            Ok(doc) => read.docs.push((doc, docs.offset())),
            Err(e) => read.error = Some(e),
        }
    }
    same(&whole, &read, "reader iterator");
    // what the documents were: each decodes alone from its bytes as it did
    // in the stream
    let mut start = 0;
    for (doc, end) in &whole.docs {
        let alone = dec
            .decode(&stream[start..*end])
            .expect("a streamed document decodes alone");
        assert!(&alone == doc, "decoded alone it differs");
        start = *end;
    }
});
