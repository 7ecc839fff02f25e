//! What every stream of documents does with the bytes it holds, whoever
//! holds them ([`Incremental`]'s vector, a tokio codec's `BytesMut`): scan
//! the current document on from where the last call stopped, take it out
//! once it is complete, and end the stream at its first error, with
//! offsets counted from the stream's first byte.

use super::*;

/// The scanner, the decoder and the stream's position, over the bytes its
/// owner buffers: each call is given them from the current document's
/// first byte on (the same bytes again, with more after them, until the
/// document is taken out).
#[derive(Debug, Default)]
pub(crate) struct Framer {
    dec: Decoder,
    scan: Scanner,
    /// The stream offset of the current document's first byte.
    offset: usize,
    /// A document failed: the stream is over.
    failed: bool,
}

impl Framer {
    pub(crate) fn new(dec: Decoder) -> Framer {
        Framer {
            dec,
            ..Framer::default()
        }
    }

    /// Whether the document at the start of `doc` is complete, and how to
    /// take it; `None` when more input is needed or the stream is over.
    /// `at_end`: no more input will come, so the decoder has the last word
    /// on what is left.
    pub(crate) fn ready(&mut self, doc: &[u8], at_end: bool) -> Option<Ready> {
        if self.failed {
            return None;
        }
        // A document known to be longer than the limits allow is refused
        // (by the scan) before more of it is buffered.
        match self.scan.run(doc, self.dec.options()) {
            Scan::End(len) => Some(Ready::Scanned(len)),
            Scan::Invalid { len, fallback } => Some(Ready::Refused(len, fallback)),
            Scan::More if at_end && !doc.is_empty() => Some(Ready::Refused(doc.len(), None)),
            Scan::More => None,
        }
    }

    /// Takes the document `ready` says is at the start of `doc` by `read`,
    /// which is given the decoder and the document's bytes (the bytes up
    /// to the end of the input when the scanner could not end it) and
    /// returns what it made of them and how many bytes it used: that value
    /// and that count, by which the owner advances its buffer. An error is
    /// yielded at the stream offset of the document (the scanner's, when
    /// it saw the defect and the decoder only saw the bytes end), and ends
    /// the stream.
    pub(crate) fn take<X>(
        &mut self,
        doc: &[u8],
        ready: Ready,
        read: impl FnOnce(&Decoder, &[u8]) -> Result<(X, usize)>,
    ) -> Result<(X, usize)> {
        // The buffered document is held while it is decoded.
        match ready.read(doc, |doc| read(&self.dec, doc)) {
            Ok((v, used)) => {
                self.advance(used);
                Ok((v, used))
            }
            Err(e) => {
                self.failed = true;
                Err(e.shifted(self.offset, false))
            }
        }
    }

    /// Whether the scan of the current document has not started (and the
    /// stream goes on): a read that finds the document's end itself may
    /// take it instead (see [`advance`](Self::advance)).
    #[cfg(feature = "serde")]
    pub(crate) fn fresh(&self) -> bool {
        self.scan.pos == 0 && !self.failed
    }

    /// The current document, of `used` bytes, was taken out: on to the
    /// next.
    pub(crate) fn advance(&mut self, used: usize) {
        self.offset += used;
        self.scan.reset();
    }

    /// Takes the document `ready` says is at the start of `doc` as a graph.
    pub(crate) fn document(&mut self, doc: &[u8], ready: Ready) -> Result<(Document, usize)> {
        self.take(doc, ready, |dec, doc| {
            dec.decode_prefix_held(doc, doc.len())
        })
    }

    /// Takes the document `ready` says is at the start of `doc` as bytes:
    /// their length. A scanned document is not decoded; one the scanner
    /// refused, or the bytes left at the end of the input, are decoded to
    /// tell.
    pub(crate) fn raw(&mut self, doc: &[u8], ready: Ready) -> Result<usize> {
        match ready {
            Ready::Scanned(len) => {
                self.advance(len);
                Ok(len)
            }
            ready => self
                .take(doc, ready, |dec, doc| {
                    let (_, used) = dec.decode_prefix_held(doc, doc.len())?;
                    Ok(((), used))
                })
                .map(|((), used)| used),
        }
    }

    /// At least how many more bytes the current document needs, given the
    /// `buffered` bytes of it (see [`Incremental::needed`]).
    pub(crate) fn needed(&self, buffered: usize) -> usize {
        if self.failed {
            return 0;
        }
        let unscanned = buffered - self.scan.pos;
        self.scan.needed().saturating_sub(unscanned)
    }

    /// The stream offset of the current document.
    pub(crate) fn offset(&self) -> usize {
        self.offset
    }

    /// Whether a document failed: the stream is over.
    pub(crate) fn failed(&self) -> bool {
        self.failed
    }

    pub(crate) fn decoder(&self) -> &Decoder {
        &self.dec
    }
}
