//! The documents of a stream of concatenated documents, in turn.

use super::Decoder;
use crate::error::Result;
use crate::value::Document;

impl Decoder {
    /// The documents of a stream of concatenated documents, in turn (Perl's
    /// `incremental` option). A document that fails (a truncated last one,
    /// say) yields its error, with its offset in the stream, and ends the
    /// iteration.
    ///
    /// ```
    /// use sereal::{encode, Decoder, ErrorKind, Value};
    /// let mut stream = encode(&Value::from(1)).unwrap();
    /// stream.extend(encode(&Value::array([2, 3])).unwrap());
    /// stream.extend(&encode(&Value::from("cut")).unwrap()[..8]);
    /// let docs: Vec<_> = Decoder::default().documents(&stream).collect();
    /// assert_eq!(docs.len(), 3);
    /// assert_eq!(docs[1].as_ref().unwrap(), &Value::array([2, 3]));
    /// assert_eq!(docs[2].as_ref().unwrap_err().kind(), &ErrorKind::Truncated);
    /// ```
    pub fn documents<'d, 'a>(&'d self, input: &'a [u8]) -> Documents<'d, 'a> {
        Documents {
            dec: self,
            input,
            pos: 0,
            done: false,
        }
    }
}

/// An iterator over the documents of a stream: see [`Decoder::documents`].
///
/// ```
/// use sereal::{encode, Decoder, Value};
/// let mut stream = encode(&Value::from(1)).unwrap();
/// stream.extend(encode(&Value::from("two")).unwrap());
/// let docs: Vec<Value> = Decoder::default()
///     .documents(&stream)
///     .map(|d| d.unwrap().into_value())
///     .collect();
/// assert_eq!(docs, [Value::from(1), Value::from("two")]);
/// ```
pub struct Documents<'d, 'a> {
    dec: &'d Decoder,
    input: &'a [u8],
    pos: usize,
    done: bool,
}

impl Documents<'_, '_> {
    /// The stream offset of the next document.
    ///
    /// ```
    /// use sereal::{encode, Decoder, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let first = encode(&Value::from(1))?;
    /// let mut stream = first.clone();
    /// stream.extend(encode(&Value::from("two"))?);
    /// let dec = Decoder::default();
    /// let mut docs = dec.documents(&stream);
    /// assert_eq!(docs.offset(), 0);
    /// docs.next().unwrap()?;
    /// assert_eq!(docs.offset(), first.len()); // where the second starts
    /// # Ok(())
    /// # }
    /// ```
    pub fn offset(&self) -> usize {
        self.pos
    }
}

impl Iterator for Documents<'_, '_> {
    type Item = Result<Document>;

    fn next(&mut self) -> Option<Result<Document>> {
        if self.done || self.pos >= self.input.len() {
            return None;
        }
        match self.dec.decode_prefix(&self.input[self.pos..]) {
            Ok((v, used)) => {
                self.pos += used;
                Some(Ok(v))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e.shifted(self.pos, false)))
            }
        }
    }
}
