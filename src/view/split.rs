//! Splitting a document whose root is an array into documents of about a
//! given size, on its bytes.

use super::copy::{write_header, Class, Copied, Copier, Outside, Weak};
use super::merge::write_array_ref;
use super::walk::Frame;
use super::View;
use crate::compress::Compression;
use crate::encoder::{Encoder, EncoderOptions};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{self, tag};
use crate::value::Value;
use hashbrown::HashMap;

/// The user header of a chunk, made from its element count.
type HeaderFn<'a> = Box<dyn Fn(usize) -> Value + 'a>;

/// Cuts a document whose root is an array (or a reference to one) into
/// documents of at most about `chunk_size` bytes each, straight from its
/// bytes, as Perl's `Sereal::Splitter` does: each chunk is a document whose
/// root is a reference to an array of consecutive elements of the
/// original, in order, and decodes alone to them.
///
/// An element that refers to an item of an earlier chunk (a second
/// reference to a shared record, an object's class named once) has the
/// item copied into its chunk, once, with its class; references among the
/// elements of one chunk keep their sharing. A weak reference to an item
/// copied in is written strong, since nothing else in the chunk would hold
/// it. An element that refers to the array being split (or to what holds
/// it) is an error: a chunk cannot hold the whole.
///
/// `chunk_size` bounds each chunk's uncompressed document: a chunk is
/// larger only when its one element alone is. The chunks are an
/// [`Iterator`] of documents; the first error ends it.
///
/// ```
/// use sereal::{sereal, view::{Splitter, View}, Value};
/// # fn main() -> Result<(), sereal::Error> {
/// let rows: Vec<Value> = (0..100).map(|i| sereal!({"id": i, "name": "row"})).collect();
/// let bytes = sereal::encode(&Value::array(rows.clone()))?;
/// let chunks: Vec<Vec<u8>> = Splitter::new(View::new(&bytes)?, 500)?.collect::<Result<_, _>>()?;
/// assert!(chunks.len() > 1 && chunks.iter().all(|c| c.len() <= 500));
/// let mut again = Vec::new();
/// for c in &chunks {
///     let doc = sereal::decode(c)?;
///     again.extend(doc.as_array().unwrap().iter().cloned());
/// }
/// assert_eq!(again, rows);
/// # Ok(())
/// # }
/// ```
pub struct Splitter<'a> {
    view: View<'a>,
    chunk_size: usize,
    encoder: EncoderOptions,
    header: Option<HeaderFn<'a>>,
    /// Whether the root is an `ARRAY` itself, not a reference to one.
    bare: bool,
    first: usize,
    count: usize,
    /// The next element: its index and position.
    index: usize,
    pos: usize,
    /// Classes of the tracked objects met so far (see `Copier::classes`).
    classes: HashMap<usize, Class>,
    stack: Vec<Frame>,
    failed: bool,
}

impl std::fmt::Debug for Splitter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Splitter")
            .field("chunk_size", &self.chunk_size)
            .field("elements", &self.count)
            .field("next", &self.index)
            .finish()
    }
}

impl<'a> Splitter<'a> {
    /// A splitter of the document `view` reads, into chunks of about
    /// `chunk_size` bytes, written in the document's protocol version,
    /// uncompressed. Its root must be an array or a reference to one.
    ///
    /// ```
    /// use sereal::{sereal, view::{Splitter, View}};
    /// let bytes = sereal::encode(&sereal!({"not": "an array"})).unwrap();
    /// assert!(Splitter::new(View::new(&bytes).unwrap(), 100).is_err());
    /// ```
    pub fn new(view: View<'a>, chunk_size: usize) -> Result<Splitter<'a>> {
        let r = view.reader();
        let (root, _) = r.tag(0)?;
        let Some(cont) = r.container(0)?.filter(|c| !c.hash && c.first > 0) else {
            return Err(Error::new(ErrorKind::Invalid(
                "a document is split at its root array, and this root is not an array".into(),
            )));
        };
        let encoder = EncoderOptions::new().protocol_version(view.version());
        Ok(Splitter {
            bare: root.t == tag::ARRAY,
            first: cont.first,
            count: cont.count,
            index: 0,
            pos: cont.first,
            view,
            chunk_size,
            encoder,
            header: None,
            classes: HashMap::new(),
            stack: Vec::new(),
            failed: false,
        })
    }

    /// Compresses each chunk, as [`EncoderOptions::compress`] (with the
    /// encoder's threshold: see [`compress_threshold`](Self::compress_threshold)).
    pub fn compress(mut self, c: Compression) -> Self {
        self.encoder = self.encoder.compress(c);
        self
    }

    /// The smallest chunk body compressed, as
    /// [`EncoderOptions::compress_threshold`].
    pub fn compress_threshold(mut self, bytes: usize) -> Self {
        self.encoder = self.encoder.compress_threshold(bytes);
        self
    }

    /// The protocol version of the chunks: at least the document's
    /// (the default).
    pub fn protocol_version(mut self, version: u8) -> Self {
        self.encoder = self.encoder.protocol_version(version);
        self
    }

    /// Gives each chunk user header data made from its element count:
    /// what `Sereal::Splitter`'s `header_data_template` with its
    /// `'__$CNT__'` placeholder does. Needs protocol 2 or later.
    ///
    /// ```
    /// use sereal::{sereal, view::{Splitter, View}, Decoder, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let bytes = sereal::encode(&Value::array((0..10).map(Value::from).collect::<Vec<_>>()))?;
    /// let chunks = Splitter::new(View::new(&bytes)?, 16)?
    ///     .header(|count| sereal!({"elements_count": (count)}));
    /// for chunk in chunks {
    ///     let chunk = chunk?;
    ///     let (header, body) = Decoder::default().decode_with_header(&chunk)?;
    ///     let n = header.unwrap().get("elements_count").unwrap().as_i64().unwrap();
    ///     assert_eq!(n as usize, body.as_array().unwrap().len());
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn header(mut self, make: impl Fn(usize) -> Value + 'a) -> Self {
        self.header = Some(Box::new(make));
        self
    }

    /// The chunk of the elements from the next one to the one ending at
    /// the last of `ends`, and where its body starts.
    fn chunk(&mut self, ends: &[usize]) -> Result<(Vec<u8>, usize)> {
        let n = ends.len();
        let version = self.encoder.protocol_version;
        let mut out = match &self.header {
            Some(make) => {
                let opts = EncoderOptions::new().protocol_version(version);
                let mut doc = Encoder::new(opts)?.encode_with_header(&Value::Undef, &make(n))?;
                // The document of an undef body: its header, and the
                // body's one byte.
                doc.pop();
                doc
            }
            None => {
                let mut out = Vec::new();
                write_header(&mut out, version);
                out
            }
        };
        let shift = if version == 1 { out.len() } else { 1 };
        let body_start = out.len();
        if self.bare {
            out.push(tag::ARRAY);
            protocol::write_varint(&mut out, n as u64);
        } else {
            write_array_ref(&mut out, n);
        }
        let r = self.view.reader();
        let floor = self.first;
        let mut copier = Copier::new(r, shift, body_start, Outside::Expand { floor })
            .classes(&mut self.classes)
            .weak(Weak::Strengthen);
        let from = self.pos;
        let to = ends.last().copied().unwrap_or(from);
        if let Copied::Outside(_) = copier.copy(from, to, &mut out)? {
            return Err(Error::new(ErrorKind::Invalid(format!(
                "an element from index {} on refers to the array being split",
                self.index
            ))));
        }
        Ok((out, body_start))
    }

    fn next_chunk(&mut self) -> Result<Vec<u8>> {
        if self.encoder.protocol_version < self.view.version() {
            return Err(Error::new(ErrorKind::BadOption(format!(
                "chunks of a protocol {} document cannot be written in protocol {}",
                self.view.version(),
                self.encoder.protocol_version
            ))));
        }
        self.encoder.validate()?;
        let r = self.view.reader();
        // The elements whose bytes fit, at least one.
        let mut ends = Vec::new();
        let mut size = 16usize;
        let mut p = self.pos;
        while self.index + ends.len() < self.count {
            let end = r.walk(p, &mut self.stack)?;
            size += end - p;
            if size > self.chunk_size && !ends.is_empty() {
                break;
            }
            ends.push(end);
            p = end;
        }
        loop {
            let (mut out, body_start) = self.chunk(&ends)?;
            let n = ends.len();
            if out.len() > self.chunk_size && n > 1 {
                // Copied in items made it too large: fewer elements.
                let fit = n.saturating_mul(self.chunk_size) / out.len();
                ends.truncate(fit.clamp(1, n - 1));
                continue;
            }
            let version = self.encoder.protocol_version;
            self.encoder
                .framing()
                .finish(&mut out, 0, body_start, version)?;
            self.index += n;
            self.pos = ends.last().copied().unwrap_or(self.pos);
            return Ok(out);
        }
    }
}

impl Iterator for Splitter<'_> {
    type Item = Result<Vec<u8>>;

    fn next(&mut self) -> Option<Result<Vec<u8>>> {
        if self.failed || self.index >= self.count {
            return None;
        }
        let chunk = self.next_chunk();
        self.failed = chunk.is_err();
        Some(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Body as NodeBody, Ref};

    /// The chunks of one element each of `doc`, in Perl's notation.
    fn one_by_one(doc: &Value) -> Vec<String> {
        let bytes = crate::encode(doc).unwrap();
        Splitter::new(View::new(&bytes).unwrap(), 0)
            .unwrap()
            .map(|c| crate::decode(&c.unwrap()).unwrap().to_string())
            .collect()
    }

    /// An element that refers to an item of an earlier chunk has a
    /// reference to a copy of it, whatever the item is: here a scalar
    /// holding a reference to an array (an `ARRAYREF_0` a `REFP` names,
    /// which Perl reads as a reference to that scalar).
    #[test]
    fn a_reference_to_an_earlier_chunks_scalar_stays_a_reference() {
        // [\$x, \$x] with $x = []: ARRAYREF_2 REFN ARRAYREF_0* REFP
        let x = Ref::scalar(Value::array(Vec::<Value>::new()));
        let doc = Value::array(vec![Value::Ref(x.clone()), Value::Ref(x)]);
        assert_eq!(one_by_one(&doc), ["[\\[]]", "[\\[]]"]);
    }

    /// A copied-in reference that something refers to keeps its track
    /// flag, and so does a weak one written strong (on a `PAD`).
    #[test]
    fn copied_in_references_stay_tracked() {
        // my ($a, $b); $a = \$b; $b = \$a; [\$a, \$b]
        let a = Ref::scalar(Value::Undef);
        let b = Ref::scalar(Value::Ref(a.clone()));
        *a.body_mut().unwrap() = NodeBody::Scalar(Value::Ref(b.clone()));
        let doc = Value::array(vec![Value::Ref(a.clone()), Value::Ref(b.clone())]);
        assert_eq!(one_by_one(&doc), ["[\\\\$VAR1->[0]]", "[\\\\$VAR1->[0]]"]);
        // the same with both references weak, the elements the scalars
        // themselves: [$a, $b] (Perl's corpus case 28)
        *a.body_mut().unwrap() = NodeBody::Scalar(Value::Weak(b.downgrade()));
        *b.body_mut().unwrap() = NodeBody::Scalar(Value::Weak(a.downgrade()));
        let doc = Value::array(vec![Value::Alias(a.clone()), Value::Alias(b.clone())]);
        let chunks = one_by_one(&doc);
        // the first chunk would hold its copy of $b only weakly: the
        // reference is written strong, and the data stays
        assert_eq!(chunks, ["[\\\\$VAR1->[0]]", "[\\\\$VAR1->[0]]"]);
    }
}
