#![doc = include_str!("../README.md")]
//!
//! # Modules
//!
//! [`value`] (the graph), `blessed` (Perl objects through serde, feature
//! `serde`), [`encoder`] (with FREEZE and the callback
//! guards), [`decoder`] (with THAW, limits and streams), [`stream`]
//! (documents decoded as their bytes arrive, pushed or read), `codec`
//! (tokio codecs for framed async streams, feature `tokio`), [`compress`],
//! `ser` and `de` (serde, feature `serde`), `json` (plain and lossless JSON,
//! feature `json`), [`protocol`] (tags and varints), [`error`], and
//! `conformance` (checks against a corpus of documents written by Perl,
//! feature `conformance`).

#![warn(missing_docs)]

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
// between threads (README, "Threads"); a field that breaks this fails the
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

/// The guide's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/streams.md")]
pub struct StreamsGuide;
