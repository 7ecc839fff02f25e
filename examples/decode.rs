//! Decode a Sereal document and look at it three ways: the value graph's
//! debug form, plain JSON, and by walking the values.
//!
//! ```sh
//! cargo run --example decode                 # a document Perl wrote
//! cargo run --example decode -- doc.srl      # your own
//! ```

use sereal::{json, Decoder, Value};

/// What Perl's `encode_sereal({x => $h, y => $h})` writes when `$h = {a => 1}`
/// is one hash referred to twice.
const PERL_DOC: &[u8] = b"=\xF3rl\x05\x00\x52\x61y\x28\xaa\x01\x61a\x01\x61x\x29\x05";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let bytes = match std::env::args_os().nth(1) {
        Some(path) => std::fs::read(path)?,
        None => PERL_DOC.to_vec(),
    };
    let (header, body) = Decoder::default().decode_with_header(&bytes)?;
    if let Some(h) = header {
        println!("user header: {h:?}");
    }
    // #1= marks a node met again later (#1#): the two keys share one hash
    println!("debug:       {body:?}");
    println!("plain JSON:  {}", json::to_json(&body, false)?);

    // Walking the graph: a hash reference, its keys, the shared node.
    if let Some(node) = body.as_strong_ref() {
        if let Some(hash) = node.as_hash() {
            for (key, value) in hash.iter() {
                match value.as_strong_ref().map(|r| r.strong_count()) {
                    Some(n) if n > 1 => println!("key {key}: {value:?} (a node {n} slots share)"),
                    _ => println!("key {key}: {value:?}"),
                }
            }
        }
    }
    if bytes == PERL_DOC {
        assert_eq!(body.get("x").unwrap().get("a"), Some(Value::from(1)));
    }
    // Decoded documents can hold reference cycles: free them when done.
    body.dismantle();
    Ok(())
}
