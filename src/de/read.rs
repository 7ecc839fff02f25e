//! The one-shot entry points: a document's bytes, or a reader of them, or
//! a graph, to a `T`.

use super::*;

/// Deserializes a `T` from the Sereal document `input` (borrowing strings
/// from it when it is not compressed).
///
/// ```
/// let doc = sereal::to_vec(&(1u8, "two", [3.5f64])).unwrap();
/// let (a, b, c): (u8, String, Vec<f64>) = sereal::from_slice(&doc).unwrap();
/// assert_eq!((a, b.as_str(), c), (1, "two", vec![3.5]));
/// ```
pub fn from_slice<'de, T: de::Deserialize<'de>>(input: &'de [u8]) -> Result<T> {
    deserialize(input, Defaults)
}

/// As [`from_slice`], with decoder options (limits, refusals).
///
/// ```
/// use sereal::{DecoderOptions, ErrorKind};
/// # fn main() -> Result<(), sereal::Error> {
/// let doc = sereal::to_vec(&vec![0u8; 1000])?;
/// let strict = DecoderOptions::new().max_num_array_entries(100);
/// let e = sereal::from_slice_with::<Vec<u8>>(&doc, strict).unwrap_err();
/// assert!(matches!(e.kind(), ErrorKind::LimitExceeded(_)));
/// assert_eq!(sereal::from_slice::<Vec<u8>>(&doc)?.len(), 1000);
/// # Ok(())
/// # }
/// ```
pub fn from_slice_with<'de, T: de::Deserialize<'de>>(
    input: &'de [u8],
    opts: DecoderOptions,
) -> Result<T> {
    deserialize(input, &opts)
}

/// Where a one-shot read finds its options: [`DEFAULTS`] through a type of
/// no size (so that a read out of line still folds them to constants), or
/// the caller's.
pub(super) trait Options: Copy {
    fn get(&self) -> &DecoderOptions;
}

/// The default options, for [`from_slice`].
#[derive(Clone, Copy)]
struct Defaults;

impl Options for Defaults {
    #[inline(always)]
    fn get(&self) -> &DecoderOptions {
        &DEFAULTS
    }
}

impl Options for &DecoderOptions {
    #[inline(always)]
    fn get(&self) -> &DecoderOptions {
        self
    }
}

#[inline(always)]
fn deserialize<'de, T: de::Deserialize<'de>, O: Options>(input: &'de [u8], opts: O) -> Result<T> {
    // The input is the document: refused before it is read.
    document_size_check(opts.get(), input.len())?;
    // The common header's document is read from its root (which builds
    // the deserializer only for a body that needs it, and then checks that
    // nothing follows); the rest is framed out of line.
    if Header::raw_len(input).is_none() {
        return deserialize_parsed(input, opts.get());
    }
    let mut de = None;
    let v = T::deserialize(Root {
        input,
        opts,
        de: &mut de,
    })
    .map_err(Root::<O>::place)?;
    if let Some(de) = &de {
        de.end()?;
    }
    Ok(v)
}

fn deserialize_parsed<'de, T: de::Deserialize<'de>>(
    input: &'de [u8],
    opts: &DecoderOptions,
) -> Result<T> {
    let mut de = Body::over(Framed::parsed(input, opts, 0)?, opts, Stack::lazy(), 0);
    let v = T::deserialize(&mut de).map_err(|e| de.cur.place(e, 0))?;
    de.end()?;
    Ok(v)
}

/// Reads a whole document from `reader` and deserializes a `T` (which owns
/// its data). A failed read is an [`ErrorKind::Io`] error.
///
/// ```
/// let bytes = sereal::to_vec(&("id", 7u8)).unwrap();
/// let (k, v): (String, u8) = sereal::from_reader(&bytes[..]).unwrap();
/// assert_eq!((k.as_str(), v), ("id", 7));
/// ```
pub fn from_reader<R: std::io::Read, T: de::DeserializeOwned>(reader: R) -> Result<T> {
    from_reader_with(reader, DecoderOptions::default())
}

/// As [`from_reader`], with the decoder's limits. The bytes read are held
/// while they are decoded, so they count against `max_memory` too: no more
/// than one byte past `max_document_size` or `max_memory` (the smaller, of
/// those set) is read, and a longer input is refused there, before it is
/// held in memory (with neither set, the reader is read to its end).
///
/// ```
/// use sereal::{DecoderOptions, ErrorKind};
/// let bytes = sereal::to_vec(&"a string of some length".repeat(10)).unwrap();
/// let opts = DecoderOptions::new().max_document_size(64);
/// let e = sereal::from_reader_with::<_, String>(&bytes[..], opts).unwrap_err();
/// assert!(matches!(e.kind(), ErrorKind::LimitExceeded(_)));
/// assert_eq!(e.offset(), Some(64));
/// ```
pub fn from_reader_with<R: std::io::Read, T: de::DeserializeOwned>(
    reader: R,
    mut opts: DecoderOptions,
) -> Result<T> {
    let limits = [
        (opts.max_document_size, "max_document_size"),
        (opts.max_memory, "max_memory"),
    ];
    let limit = limits.into_iter().filter(|&(max, _)| max != 0).min();
    let mut buf = Vec::new();
    let read = match limit {
        None => std::io::Read::read_to_end(&mut { reader }, &mut buf),
        Some((max, _)) => {
            let mut limited = std::io::Read::take(reader, (max as u64).saturating_add(1));
            std::io::Read::read_to_end(&mut limited, &mut buf)
        }
    };
    read.map_err(|e| Error::io("read", e))?;
    if let Some((max, name)) = limit.filter(|&(max, _)| buf.len() > max) {
        let m = format!("document of more than {max} bytes ({name} {max})");
        return Err(Error::at(ErrorKind::LimitExceeded(m), max));
    }
    if opts.max_memory != 0 {
        // What is left of it once the document is held (at least a byte:
        // 0 would be no limit).
        opts.max_memory = (opts.max_memory - buf.len()).max(1);
    }
    from_slice_with(&buf, opts)
}

/// Reads a `T` from a [`Value`](crate::Value) graph (or a
/// [`Document`](crate::Document)) directly, without encoding it: the `T`
/// that [`from_slice`] reads from the graph's encoding, with the same
/// rules, refusals and limits (serde's 128 levels; a graph whose shared
/// nodes would expand exponentially as a tree is refused, as an expanding
/// document is). A weak reference back into the path being read reads as
/// undef; a strong cycle is an error.
///
/// ```
/// #[derive(serde::Deserialize, Debug, PartialEq)]
/// struct User { id: u32, name: String, admin: bool, nick: Option<String> }
/// let v = sereal::Value::hash([
///     ("id", sereal::Value::from(7)),
///     ("name", "ann".into()),
///     ("admin", sereal::Value::from(1)), // Perl's truth
///     ("nick", sereal::Value::Undef),
/// ]);
/// let user: User = sereal::from_value(&v).unwrap();
/// assert_eq!(user, User { id: 7, name: "ann".into(), admin: true, nick: None });
/// // what the graph's encoding gives
/// assert_eq!(sereal::from_slice::<User>(&sereal::encode(&v).unwrap()).unwrap(), user);
///
/// // a decoded Document is read as its root, `?` and all
/// fn id(bytes: &[u8]) -> sereal::Result<u32> {
///     let doc = sereal::decode(bytes);
///     let user: User = sereal::from_value(&doc?)?;
///     Ok(user.id)
/// }
/// assert_eq!(id(&sereal::encode(&v).unwrap()).unwrap(), 7);
/// ```
pub fn from_value<T, V>(value: &V) -> Result<T>
where
    T: de::DeserializeOwned,
    V: std::borrow::Borrow<crate::Value> + ?Sized,
{
    super::value::read(value.borrow(), &DEFAULTS)
}

/// As [`from_value`], with `opts`' serde depth limit, `validate_utf8` and
/// [`strict_types`](DecoderOptions::strict_types) (the other options are
/// the decoder's, for bytes).
///
/// ```
/// use sereal::{DecoderOptions, Value};
/// let v = Value::from("12");
/// assert_eq!(sereal::from_value_with::<u64, _>(&v, &DecoderOptions::new()).unwrap(), 12);
/// let strict = DecoderOptions::new().strict_types(true);
/// assert!(sereal::from_value_with::<u64, _>(&v, &strict).is_err());
/// ```
pub fn from_value_with<T, V>(value: &V, opts: &DecoderOptions) -> Result<T>
where
    T: de::DeserializeOwned,
    V: std::borrow::Borrow<crate::Value> + ?Sized,
{
    super::value::read(value.borrow(), opts)
}
