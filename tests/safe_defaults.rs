//! Hostile documents under the DEFAULT options: each is refused (or read)
//! holding a bounded amount of memory, measured by a counting allocator,
//! through every entry point a server uses: `decode`, `decode_bytes`,
//! `from_slice` into `sereal::Value` and `serde_json::Value`, the stream
//! readers. Ordinary documents still decode under the same defaults.

use sereal::{
    from_slice, stream::Incremental, Category, Decoder, DecoderOptions, ErrorKind, Value,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

/// The system allocator, counting the bytes live and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new > l.size() {
                let now = LIVE.fetch_add(new - l.size(), Relaxed) + new - l.size();
                PEAK.fetch_max(now, Relaxed);
            } else {
                LIVE.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// One test at a time: the counters are the process's, and a test
/// running beside a measurement would count in it.
static SERIAL: Mutex<()> = Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

const MIB: usize = 1 << 20;

/// Runs `f` and returns its result and the most it held at once
/// beyond what was live when it started.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let v = f();
    (v, PEAK.load(Relaxed) - base)
}

/// A zstd document whose body is an `ARRAY` of `n` `POS_0`: a few KB that
/// Perl reads as `n` zeros. Made in pieces, never whole.
fn zstd_zeros(n: usize) -> Vec<u8> {
    let mut body_head = vec![0x2b];
    let mut v = n as u64;
    while v >= 0x80 {
        body_head.push((v as u8) | 0x80);
        v >>= 7;
    }
    body_head.push(v as u8);
    let mut z = zstd::stream::write::Encoder::new(Vec::new(), 19).unwrap();
    z.set_pledged_src_size(Some((body_head.len() + n) as u64))
        .unwrap();
    z.include_contentsize(true).unwrap();
    z.write_all(&body_head).unwrap();
    let zeros = vec![0u8; MIB];
    let mut left = n;
    while left > 0 {
        let k = left.min(MIB);
        z.write_all(&zeros[..k]).unwrap();
        left -= k;
    }
    let frame = z.finish().unwrap();
    let mut doc = b"=\xF3rl\x45\x00".to_vec(); // protocol 5, zstd
    let mut len = frame.len() as u64;
    while len >= 0x80 {
        doc.push((len as u8) | 0x80);
        len >>= 7;
    }
    doc.push(len as u8);
    doc.extend_from_slice(&frame);
    doc
}

fn assert_memory_limit(r: sereal::Result<impl std::fmt::Debug>, held: usize, cap: usize) {
    let e = r.expect_err("refused");
    assert_eq!(e.classify(), Category::Limit, "{e}");
    assert!(
        e.to_string().contains("max_memory"),
        "names the option: {e}"
    );
    assert!(
        held < cap,
        "held {} MiB, over {} MiB",
        held / MIB,
        cap / MIB
    );
}

#[test]
fn a_compressed_array_of_two_hundred_million_zeros_is_refused_holding_little() {
    let _alone = alone();
    for n in [50_000_000, 200_000_000] {
        let doc = zstd_zeros(n);
        assert!(doc.len() < 10_000, "{} bytes", doc.len());
        let cap = 512 * MIB;

        let (r, held) = peak_of(|| sereal::decode(&doc));
        assert_memory_limit(r, held, cap);
        let (r, held) = peak_of(|| sereal::decode_bytes(&bytes::Bytes::from(doc.clone())));
        assert_memory_limit(r, held, cap);
        let (r, held) = peak_of(|| from_slice::<Value>(&doc));
        assert_memory_limit(r, held, cap);
        let (r, held) = peak_of(|| from_slice::<serde_json::Value>(&doc));
        assert_memory_limit(r, held, cap);
        let (r, held) = peak_of(|| from_slice::<Vec<u8>>(&doc));
        assert_memory_limit(r, held, cap);
        let (r, held) = peak_of(|| Decoder::default().documents_from_reader(&doc[..]).next());
        assert_memory_limit(r.expect("a document"), held, cap);
        let (r, held) = peak_of(|| {
            let mut inc = Incremental::default();
            for piece in doc.chunks(1000) {
                inc.feed(piece);
                if let Some(d) = inc.next_document() {
                    return d;
                }
            }
            inc.finish();
            inc.next_document().expect("a document")
        });
        assert_memory_limit(r, held, cap);
    }
}

/// Endless bytes after a document's start.
struct Endless {
    head: Vec<u8>,
    sent: usize,
}

impl std::io::Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.sent < self.head.len() {
            let n = buf.len().min(self.head.len() - self.sent);
            buf[..n].copy_from_slice(&self.head[self.sent..self.sent + n]);
            self.sent += n;
            return Ok(n);
        }
        buf.fill(b'x');
        self.sent += buf.len();
        Ok(buf.len())
    }
}

#[test]
fn a_stream_claiming_a_terabyte_string_is_refused_at_the_claim() {
    let _alone = alone();
    let mut head = b"=\xF3rl\x05\x00\x26".to_vec();
    let mut n = 1u64 << 40;
    while n >= 0x80 {
        head.push((n as u8) | 0x80);
        n >>= 7;
    }
    head.push(n as u8);
    let ((e, sent), held) = peak_of(|| {
        let mut docs = Decoder::default().documents_from_reader(Endless {
            head: head.clone(),
            sent: 0,
        });
        let e = docs.next().expect("a document").unwrap_err();
        (e, docs.get_ref().sent)
    });
    assert_eq!(e.classify(), Category::Limit, "{e}");
    assert_eq!(e.offset(), Some(7), "at the length: {e}");
    assert!(held < 64 * MIB, "held {} MiB", held / MIB);
    assert!(sent <= 64 * 1024, "read {sent} bytes");

    // The same with max_document_size: its limit, at the claim.
    let dec = Decoder::new(DecoderOptions::new().max_document_size(1 << 20));
    let e = dec
        .documents_from_reader(Endless { head, sent: 0 })
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(e.offset(), Some(7), "{e}");
    assert!(e.to_string().contains("limit 1048576"), "{e}");

    // Incremental too, fed a byte at a time: refused at the claim's last
    // byte, however the bytes come.
    let mut inc = Incremental::default();
    let mut doc = b"=\xF3rl\x05\x00\x26".to_vec();
    doc.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x40]);
    for (i, &b) in doc.iter().enumerate() {
        inc.feed(&[b]);
        if let Some(r) = inc.next_document() {
            assert_eq!(i, doc.len() - 1);
            let e = r.unwrap_err();
            assert_eq!((e.classify(), e.offset()), (Category::Limit, Some(7)));
            return;
        }
    }
    panic!("not refused");
}

/// A 1,000-byte string and a million `COPY`s of it: 3 MB of input, 1 GB
/// of strings once copied.
#[test]
fn copies_of_a_long_string_count_each_time() {
    let _alone = alone();
    let mut doc = b"=\xF3rl\x05\x00\x2b".to_vec();
    let n = 1_000_000u64;
    let mut v = n + 1;
    while v >= 0x80 {
        doc.push((v as u8) | 0x80);
        v >>= 7;
    }
    doc.push(v as u8);
    let at = doc.len() - 5; // body offset of the string (body starts at 5 + 1)
    doc.extend_from_slice(&[0x26, 0xe8, 0x07]);
    doc.extend(std::iter::repeat_n(b's', 1000));
    for _ in 0..n {
        doc.push(0x2f);
        doc.push(at as u8);
    }
    let cap = 300 * MIB;
    let (r, held) = peak_of(|| sereal::decode(&doc));
    assert_memory_limit(r, held, cap);
    let (r, held) = peak_of(|| from_slice::<Vec<String>>(&doc));
    assert_memory_limit(r, held, cap);
    let (r, held) = peak_of(|| from_slice::<Value>(&doc));
    assert_memory_limit(r, held, cap);
    // Raised, it reads.
    let dec = Decoder::new(DecoderOptions::new().max_memory(2 << 30));
    assert_eq!(
        dec.decode(&doc).unwrap().as_array().unwrap().len(),
        1_000_001
    );
}

/// What one decode holds stays within what `max_memory` counts: the
/// counted bytes are the heap's, for documents of every kind of item.
#[test]
fn the_count_bounds_the_heap() {
    let _alone = alone();
    let records: Vec<Value> = (0..20_000)
        .map(|i| {
            Value::hash([
                ("id", Value::from(i)),
                ("name", format!("user{i}").into()),
                ("email", format!("user{i}@example.com").into()),
                (
                    "bio",
                    "a long string of some length, longer than 22 bytes".into(),
                ),
                ("tags", Value::array([format!("t{}", i % 7)])),
                (
                    "address",
                    Value::hash([("city", Value::from(format!("city{}", i % 100)))]),
                ),
            ])
        })
        .collect();
    let keys = Value::hash((0..50_000).map(|i| (format!("key{i}"), Value::from(i))));
    let arrays = Value::array((0..50_000).map(|i| Value::array([i])));
    for v in [Value::array(records), keys, arrays] {
        let doc = sereal::encode(&v).unwrap();
        // The smallest budget that reads it, found by bisection.
        let (mut lo, mut hi) = (1usize, 1 << 30);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let ok = Decoder::new(DecoderOptions::new().max_memory(mid))
                .decode(&doc)
                .is_ok();
            if ok {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let dec = Decoder::new(DecoderOptions::new().max_memory(lo));
        let (doc, held) = peak_of(|| dec.decode(&doc).unwrap());
        drop(doc);
        // The heap is within the count plus a block of nodes being filled
        // (72 KiB) and the allocator's rounding of small blocks.
        assert!(held <= lo + lo / 8 + 80 * 1024, "held {held}, counted {lo}");
    }
}

#[test]
fn ordinary_documents_decode_under_the_defaults() {
    let _alone = alone();
    // The benchmark's `records` document at its default count, 200,000.
    let records: Vec<Value> = (0..200_000i64)
        .map(|i| {
            Value::hash([
                ("id", Value::from(i)),
                ("name", format!("user{i}").into()),
                ("email", format!("user{i}@example.com").into()),
                ("score", Value::from(2 * i + 1)),
                ("active", Value::from(i % 2)),
                (
                    "tags",
                    Value::array([format!("t{}", i % 7), format!("t{}", i % 11)]),
                ),
                (
                    "address",
                    Value::hash([
                        ("city", Value::from(format!("city{}", i % 100))),
                        ("zip", Value::from(format!("{:05}", i % 100_000))),
                    ]),
                ),
            ])
        })
        .collect();
    let v = Value::array(records);
    let doc = sereal::encode(&v).unwrap();
    assert!(sereal::decode(&doc).unwrap() == v);
    let back: Vec<serde_json::Value> = from_slice(&doc).unwrap();
    assert_eq!(back.len(), 200_000);
    let streamed: Vec<_> = Decoder::default()
        .documents_from_reader(&doc[..])
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(streamed.len(), 1);
    // Compressed, the body counts too, and it still fits.
    let z = sereal::Encoder::new(sereal::EncoderOptions::new().compress(sereal::Compression::Zstd))
        .unwrap()
        .encode(&v)
        .unwrap();
    assert!(sereal::decode(&z).unwrap() == v);
}

#[test]
fn the_presets_say_what_they_do() {
    let _alone = alone();
    let doc = zstd_zeros(5_000_000); // 5 MB body, a 120 MB graph
    assert_eq!(
        Decoder::new(DecoderOptions::trusted())
            .decode(&doc)
            .unwrap()
            .as_array()
            .map(|a| a.len()),
        Some(5_000_000)
    );
    let e = Decoder::new(DecoderOptions::untrusted())
        .decode(&doc)
        .unwrap_err();
    assert_eq!(e.classify(), Category::Limit, "{e}");
    let e = sereal::decode(&zstd_zeros(20_000_000)).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::LimitExceeded(_)), "{e}");
}
