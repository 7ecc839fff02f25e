//! A reader for the stream tests, that hands out bytes in pieces.

use std::cell::Cell;
use std::io::Read;
use std::rc::Rc;

/// A reader that returns at most `max` bytes per call, and counts what it
/// was asked for and what it delivered.
pub struct Chunked<'a> {
    pub data: &'a [u8],
    pub max: usize,
    pub asked: Rc<Cell<usize>>,
    pub delivered: Rc<Cell<usize>>,
}

impl<'a> Chunked<'a> {
    pub fn new(data: &'a [u8], max: usize) -> Self {
        Chunked {
            data,
            max,
            asked: Rc::new(Cell::new(0)),
            delivered: Rc::new(Cell::new(0)),
        }
    }
}

impl Read for Chunked<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = out.len().min(self.max).min(self.data.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        self.asked.set(self.asked.get() + out.len());
        self.delivered.set(self.delivered.get() + n);
        Ok(n)
    }
}
