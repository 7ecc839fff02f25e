//! The serializers compared: sereal (serde, and the value graph where the
//! data is a graph), rmp-serde (named fields), serde_json, postcard, ciborium.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// An encoder of one peer.
pub type Encode<T> = fn(&T) -> Vec<u8>;
/// A decoder of one peer.
pub type Decode<T> = fn(&[u8]) -> T;

/// Encodes with each peer: `(name, bytes)`.
pub fn encoders<T: Serialize>() -> Vec<(&'static str, Encode<T>)> {
    vec![
        ("sereal", |v| sereal::to_vec(v).unwrap()),
        ("rmp_serde", |v| rmp_serde::to_vec_named(v).unwrap()),
        ("serde_json", |v| serde_json::to_vec(v).unwrap()),
        ("postcard", |v| postcard::to_stdvec(v).unwrap()),
        ("ciborium", |v| {
            let mut out = Vec::new();
            ciborium::into_writer(v, &mut out).unwrap();
            out
        }),
    ]
}

/// Decoders matching [`encoders`], in the same order.
pub fn decoders<T: DeserializeOwned>() -> Vec<(&'static str, Decode<T>)> {
    vec![
        ("sereal", |b| sereal::from_slice(b).unwrap()),
        ("rmp_serde", |b| rmp_serde::from_slice(b).unwrap()),
        ("serde_json", |b| serde_json::from_slice(b).unwrap()),
        ("postcard", |b| postcard::from_bytes(b).unwrap()),
        ("ciborium", |b| ciborium::from_reader(b).unwrap()),
    ]
}
