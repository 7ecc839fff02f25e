//! Build a graph with a shared node, a cycle and a weak reference, encode it
//! with options, and check that decoding gives the same graph back.
//!
//! ```sh
//! cargo run --example shared_graph
//! ```

use sereal::{Decoder, Encoder, EncoderOptions, Key, Ref, Value};

fn main() -> Result<(), sereal::Error> {
    // One group, shared by two users; the group lists its users weakly
    // (a back-reference that does not keep them alive), as Perl code
    // would with Scalar::Util::weaken.
    let group = Ref::hash([("name", Value::from("admins"))].into_iter().collect());
    let users: Vec<Ref> = (1..=2)
        .map(|id| {
            Ref::hash(
                [
                    ("id", Value::from(id)),
                    ("name", Value::utf8(format!("usér{id}"))),
                    ("group", Value::from(&group)),
                ]
                .into_iter()
                .collect(),
            )
            .blessed("My::User")
        })
        .collect();
    group.hash_mut()?.insert(
        Key::from("members"),
        Value::array(users.iter().map(Value::weak)),
    );
    let root = Value::array(users.iter().map(Value::from));
    drop(users); // the root array now holds the only strong references

    // Protocol 3 (what an older Perl reader needs), keys sorted, and repeated
    // strings written once.
    let opts = EncoderOptions::new()
        .protocol_version(3)
        .sort_keys(true)
        .dedupe_strings(true);
    let bytes = Encoder::new(opts)?.encode(&root)?;
    println!("{} bytes: {:02x?}...", bytes.len(), &bytes[..12]);

    let back = Decoder::default().decode(&bytes)?;
    assert_eq!(back, root); // same shape, same sharing, same weak links
    println!("{back:?}");

    // The weak links keep this graph free of strong cycles, so dropping it
    // frees it; a decoded graph with strong cycles needs `dismantle()`.
    drop((back, root, group));
    Ok(())
}
