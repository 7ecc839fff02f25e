//! A stream cut into pieces, for the stream targets: the first byte of the
//! input says how large the pieces are, the rest is the stream.

/// The piece size the first byte names (1 to 16 bytes, 2 KiB to 4 KiB, or
/// 64 KiB), and the stream; `None` for an empty input.
pub fn split(data: &[u8]) -> Option<(usize, &[u8])> {
    let (&cut, stream) = data.split_first()?;
    let chunk = match cut {
        0..=0x7f => usize::from(cut % 16) + 1,
        0x80..=0xef => usize::from(cut) * 17,
        _ => 64 * 1024,
    };
    Some((chunk, stream))
}

/// A reader that hands out at most `chunk` bytes per read.
pub struct Pieces<'a> {
    pub data: &'a [u8],
    pub chunk: usize,
}

impl std::io::Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.chunk.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}
