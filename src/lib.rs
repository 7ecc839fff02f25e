//! Sereal for Rust: an encoder, a hardened decoder and serde support for
//! the [Sereal](https://github.com/Sereal/Sereal) binary format,
//! byte-identical with Perl's Sereal.
//!
//! Sereal is a compact binary format that keeps shared references, cycles,
//! weak references and blessed objects. This crate is for Rust services that
//! share caches, queues and RPC payloads with Perl: it reads every document
//! protocols 1 to 5 allow, and for the same data and options it writes the
//! bytes Perl's `Sereal::Encoder` writes.
//!
//! # Typed: serde
//!
//! Derive `Deserialize` and read Perl's data with [`from_slice`] (or
//! [`from_reader`]); write with [`to_vec`]. Hashes read into structs and
//! maps, arrays into sequences, undef into `None`, objects as their referent
//! or, with their class, through [`Blessed<T>`][Blessed].
//!
//! ```
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct User { id: u32, name: String, tags: Vec<String>, email: Option<String> }
//!
//! // the document Perl's encode_sereal({id => 7, name => "ann", tags => ["admin"], email => undef}) writes
//! let bytes = sereal::encode(&sereal::sereal!({"id": 7, "name": "ann", "tags": ["admin"], "email": null})).unwrap();
//! let user: User = sereal::from_slice(&bytes).unwrap();
//! assert_eq!(user, User { id: 7, name: "ann".into(), tags: vec!["admin".into()], email: None });
//!
//! // and back, as a hash Perl reads; Blessed<T> writes an object of its class
//! let again: User = sereal::from_slice(&sereal::to_vec(&user).unwrap()).unwrap();
//! assert_eq!(again, user);
//! let obj = sereal::to_vec(&sereal::Blessed::new("My::User", &user)).unwrap();
//! assert_eq!(sereal::decode(&obj).unwrap().node().unwrap().class().unwrap().to_string(), "My::User");
//! ```
//!
//! # Dynamic: the value graph
//!
//! [`decode`] builds a [`Value`] graph: scalars, and nodes (arrays, hashes,
//! scalar cells, regexps, optionally blessed) behind strong or weak
//! references, with their identity. [`encode`] writes one back, sharing
//! and cycles kept. [`sereal!`] builds values, [`Value::pointer`] walks them,
//! and `Display` prints them in Perl's notation.
//!
//! ```
//! use sereal::{sereal, Ref, Value};
//!
//! let team = Ref::hash([("name", Value::from("core"))].into_iter().collect());
//! let doc = sereal!({"owner": (&team), "members": [{"id": 1, "team": (&team)}]});
//! let back = sereal::decode(&sereal::encode(&doc).unwrap()).unwrap();
//! assert_eq!(back, doc); // the same shape and the same sharing
//! assert!(back.pointer("/members/0/team/name").unwrap() == "core");
//! let owner = back.get("owner").unwrap().node().unwrap();
//! assert!(owner.ptr_eq(&back.pointer("/members/0/team").unwrap().node().unwrap()));
//! assert_eq!(sereal!({"id": 1}).to_string(), "{'id' => 1}");
//! ```
//!
//! Options carry Perl's names ([`EncoderOptions`], [`DecoderOptions`]), and
//! the defaults are for input you do not control: a decode holds at most
//! `max_memory` (256 MiB) beyond its input and never allocates for a count
//! the input cannot back.
//!
//! # Features
//!
//! | feature | default | what it builds in |
//! |---|---|---|
//! | `serde` | yes | [`to_vec`], [`from_slice`], [`from_reader`], the serde [`Serializer`] and [`Deserializer`], [`Blessed<T>`][Blessed], serde for [`Value`] |
//! | `snappy` | yes | Snappy bodies ([`Compression::Snappy`]) |
//! | `zlib` | yes | zlib bodies ([`Compression::Zlib`]) |
//! | `zstd` | yes | Zstandard bodies ([`Compression::Zstd`]; builds the zstd C library) |
//! | `json` | no | `sereal::json`: plain and lossless JSON |
//! | `tokio` | no | `sereal::codec`: tokio-util codecs for framed async streams |
//! | `conformance` | no | `sereal::conformance`: checks against corpora of documents Perl wrote |
//!
//! # Modules
//!
//! - [`value`]: the graph ([`Value`], [`Ref`], [`Document`]) and how to
//!   read, change and compare it
//! - [`encoder`]: the single-pass encoder, its options, FREEZE and the
//!   callback guards
//! - [`decoder`]: the decoder, its options and limits, THAW
//! - [`stream`]: concatenated documents decoded as their bytes arrive,
//!   pushed ([`Incremental`]) or read ([`ReadDocuments`])
//! - `ser`, `de` and `blessed` (feature `serde`): serde straight to and from
//!   Sereal bytes, and Perl objects through serde
//! - `json` (feature `json`): plain and lossless JSON
//! - `codec` (feature `tokio`): tokio-util codecs
//! - [`compress`]: Snappy, zlib and Zstandard bodies
//! - [`protocol`]: the format's tags and varints
//! - [`error`]: the error type, its kinds and categories
//! - `conformance` (feature `conformance`): checks against corpora Perl wrote
//!
//! # The guide
//!
//! The repository's `docs/` folder has a page per topic, and its README a
//! tour: `docs/value-graph.md` (the value graph and identity),
//! `docs/options.md` (options and limits, untrusted input),
//! `docs/freeze-thaw.md` (FREEZE, THAW and the callback guards),
//! `docs/streams.md` (streams and async), `docs/serde.md` (serde and Perl's
//! data), `docs/cli.md` (the `sereal` command), `docs/json.md` (plain and
//! lossless JSON), `docs/interop.md` (Perl, Go, protocol versions) and
//! `docs/performance.md` (how it is measured, the figures).
//!
#![cfg_attr(
    feature = "serde",
    doc = "[Blessed]: crate::Blessed
[`from_slice`]: crate::from_slice
[`from_reader`]: crate::from_reader
[`to_vec`]: crate::to_vec
[`Serializer`]: crate::Serializer
[`Deserializer`]: crate::Deserializer"
)]
// Without serde, the serde names point at the table of features.
#![cfg_attr(
    not(feature = "serde"),
    doc = "[Blessed]: #features
[`from_slice`]: #features
[`from_reader`]: #features
[`to_vec`]: #features
[`Serializer`]: #features
[`Deserializer`]: #features"
)]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "serde")]
pub mod blessed;
#[cfg(feature = "tokio")]
pub mod codec;
pub mod compress;
#[cfg(feature = "conformance")]
pub mod conformance;
#[cfg(feature = "serde")]
pub mod de;
pub mod decoder;
pub mod encoder;
pub mod error;
#[cfg(feature = "json")]
pub mod json;
mod local;
pub mod protocol;
#[cfg(feature = "serde")]
pub mod ser;
mod stack;
pub mod stream;
pub mod value;
pub mod view;

#[cfg(feature = "serde")]
pub use blessed::{Blessed, PerlClass};
pub use compress::Compression;
#[cfg(feature = "serde")]
pub use de::{
    from_reader, from_reader_with, from_slice, from_slice_with, from_value, from_value_with,
    Deserializer,
};
pub use decoder::{
    decode, decode_bytes, looks_like_sereal, Decoder, DecoderOptions, Documents, Header, ThawOrder,
};
pub use encoder::{encode, encode_with, CallbackPolicy, Encoder, EncoderOptions, KeyOrder};
pub use error::{Category, Error, ErrorKind, IoError, Position, Result};
#[cfg(feature = "serde")]
pub use ser::{to_value, to_vec, to_vec_with, to_writer, to_writer_with, Serializer};
pub use stream::{Incremental, ReadDocuments};
pub use value::{
    Array, Body, Borrowed, BorrowedMut, Document, Dumper, Foreign, Hash, Key, Node, NotSendable,
    Ref, Regexp, SendDocument, Str, Value, WeakRef,
};

// The codecs, their options and their errors can be moved to and shared
// between threads (docs/value-graph.md, "Threads"); a field that breaks this fails the
// build here.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Encoder>();
    send_sync::<Decoder>();
    send_sync::<EncoderOptions>();
    send_sync::<DecoderOptions>();
    send_sync::<Error>();
    send_sync::<Header>();
    send_sync::<Incremental>();
    send_sync::<ReadDocuments<std::fs::File>>();
    #[cfg(feature = "serde")]
    send_sync::<ser::SerializerOptions>();
    #[cfg(feature = "tokio")]
    send_sync::<codec::SerealCodec<std::rc::Rc<()>>>();
    #[cfg(feature = "tokio")]
    send_sync::<codec::RawCodec>();
    #[cfg(feature = "tokio")]
    send_sync::<codec::DocumentCodec>();
    const fn send<T: Send>() {}
    send::<SendDocument>();
    // An error is one pointer, so that `Result`s stay small.
    assert!(std::mem::size_of::<Error>() == std::mem::size_of::<usize>());
};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// docs/value-graph.md, whose Rust examples run as doctests (one item per
/// page of the guide).
#[cfg(doctest)]
#[doc = include_str!("../docs/value-graph.md")]
pub struct ValueGraphGuide;

/// docs/options.md, whose Rust examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/options.md")]
pub struct OptionsGuide;

/// docs/freeze-thaw.md, whose Rust examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/freeze-thaw.md")]
pub struct FreezeThawGuide;

/// docs/streams.md, whose Rust examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/streams.md")]
pub struct StreamsGuide;

/// docs/serde.md, whose Rust examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/serde.md")]
pub struct SerdeGuide;

/// docs/cli.md, whose Rust examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/cli.md")]
pub struct CliGuide;

/// docs/json.md, whose Rust examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/json.md")]
pub struct JsonGuide;

/// docs/interop.md, whose Rust examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/interop.md")]
pub struct InteropGuide;

/// docs/view.md, whose Rust examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/view.md")]
pub struct ViewGuide;

/// docs/performance.md, whose Rust examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/performance.md")]
pub struct PerformanceGuide;
