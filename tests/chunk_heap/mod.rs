//! What the heap tests share (`key_chunks_heap.rs`, `node_chunks_heap.rs`,
//! `free_heap.rs`): the heap in use, measured with dhat, against where a
//! test started.

/// Blocks and bytes in use.
fn heap() -> (usize, usize) {
    let s = dhat::HeapStats::get();
    (s.curr_blocks, s.curr_bytes)
}

/// Bytes allocated while `f` runs (freed or not).
pub fn allocated_by(f: impl FnOnce()) -> u64 {
    let before = dhat::HeapStats::get().total_bytes;
    f();
    dhat::HeapStats::get().total_bytes - before
}

/// The heap where a test started.
pub struct Start((usize, usize));

impl Start {
    pub fn now() -> Start {
        Start(heap())
    }

    /// Asserts that the heap holds no more than `slack` bytes over the
    /// start (and a few blocks, which the test harness's own thread may
    /// allocate alongside).
    pub fn near(&self, what: &str, slack: usize) {
        let (start, now) = (self.0, heap());
        assert!(
            now.0 <= start.0 + 16 && now.1 <= start.1 + slack,
            "{what} left {} blocks, {} bytes",
            now.0 as i64 - start.0 as i64,
            now.1 as i64 - start.1 as i64
        );
    }

    /// Asserts that the heap holds `kept` bytes over the start, give or
    /// take a few blocks of 4 KiB in all: what a decoder keeps.
    #[allow(dead_code)] // free_heap.rs keeps nothing
    pub fn keeps(&self, what: &str, kept: usize) {
        let (start, now) = (self.0, heap());
        assert!(
            now.1 >= start.1 + kept && now.0 <= start.0 + 24 && now.1 <= start.1 + kept + 4096,
            "{what}: the decoder kept {} blocks, {} bytes (expected {kept} bytes)",
            now.0 as i64 - start.0 as i64,
            now.1 as i64 - start.1 as i64
        );
    }
}
