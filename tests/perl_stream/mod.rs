//! What the tests of streams Perl writes share (tests/stream_perl.rs,
//! tests/stream_perl_failures.rs): the producer, a Perl program that
//! writes thousands of records (a DBI row or a queue message: strings in
//! UTF-8, a nested array and hash, undef, floats, big integers, a shared
//! reference, a blessed object) under mixed options (zstd, snappy, zlib,
//! protocols 1 to 5, user headers, dedupe_strings, canonical) and reports
//! each document's length and its record as JSON; the records as Rust
//! types; and the readers, each run to its end or its first error.
#![allow(dead_code)]

use serde::Deserialize;
use sereal::stream::{Incremental, ReadDocuments};
use sereal::{Decoder, DecoderOptions, Deserializer, Document, Error};
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::common::Rng;

/// What a reader yields: the records, each with the offset after it,
/// and the error that ended them.
pub type Yield = (Vec<(Rec, usize)>, Option<Error>);

#[derive(Deserialize, Debug, PartialEq, Clone)]
pub struct Rec {
    pub id: u64,
    pub name: String,
    pub email: String,
    pub tags: Vec<String>,
    pub meta: Meta,
    pub note: Option<String>,
    pub home: Place,
    pub work: Place,
    pub acct: Account,
}

#[derive(Deserialize, Debug, PartialEq, Clone)]
pub struct Meta {
    pub score: f64,
    pub big: u64,
    pub neg: i64,
    pub nick: Option<String>,
}

#[derive(Deserialize, Debug, PartialEq, Clone)]
pub struct Place {
    pub city: String,
    pub zip: String,
}

#[derive(Deserialize, Debug, PartialEq, Clone)]
pub struct Account {
    pub plan: String,
    pub seats: u32,
}

/// The producer: `perl -e PRODUCER -- N SIDE [odd=K] [huge=K] [port=P]` writes
/// N documents to stdout (or, with `port`, to 127.0.0.1:P in irregular
/// writes) and a line per document to the file SIDE: its length, how it
/// was encoded, and what it holds as JSON. Document `odd` is an array, not
/// a record; document `huge` has a 40 MB note. Text is upgraded to UTF-8
/// (Perl writes a string of Latin-1 characters as BINARY, its bytes
/// Latin-1, which a Rust `String` refuses). The scores are decimals of
/// 15 digits, which JSON::PP prints exactly.
pub const PRODUCER: &str = r#"
use strict; use warnings;
use Sereal::Encoder; use JSON::PP; use IO::Socket::INET;
my ($n, $side, @kv) = @ARGV;
my %arg = map { split /=/, $_, 2 } @kv;
my $json = JSON::PP->new->utf8->canonical;
my (%enc, $all);
my @names = ("Ann", "Zo\x{eb}", "\x{540d}\x{524d}", "\x{3a9}mega", "Bob O'Neil", "emoji \x{1f600}");
my @pool = ("red", "green", "blue", "admin", "ops", "\x{65e5}\x{672c}", "caf\x{e9}");
# Text as a UTF-8 database handle gives it: Latin-1 strings would be BINARY
# bytes, which are no UTF-8 text.
utf8::upgrade($_) for @names, @pool;
open my $sfh, '>', $side or die "$side: $!";
binmode STDOUT;
for my $i (0 .. $n - 1) {
    my %o;
    my $comp = $i % 7 == 6 ? 'zstd' : $i % 11 == 3 ? 'snappy' : $i % 13 == 5 ? 'zlib' : 'raw';
    my $v = 5;
    if ($comp eq 'raw') { $v = $i % 17 == 2 ? 3 : $i % 19 == 4 ? 2 : $i % 23 == 8 ? 1 : 5 }
    elsif ($comp ne 'zstd' && $i % 17 == 2) { $v = 3 }
    $o{protocol_version} = $v if $v != 5;
    $o{compress} = { zstd => Sereal::Encoder::SRL_ZSTD, snappy => Sereal::Encoder::SRL_SNAPPY,
                     zlib => Sereal::Encoder::SRL_ZLIB }->{$comp}, $o{compress_threshold} = 0
        if $comp ne 'raw';
    $o{dedupe_strings} = 1 if $i % 3 == 0;
    $o{canonical} = 1 if $i % 4 == 2;
    my $header = $v >= 3 && $i % 5 == 1 ? { seq => $i + 0, src => "perl", tags => ["h"] } : undef;
    my $key = join ',', map { "$_=$o{$_}" } sort keys %o;
    my $enc = $enc{$key} //= Sereal::Encoder->new({%o});
    my $home = { city => "City " . ($i % 97), zip => sprintf("%05d", $i % 100000) };
    my @tags = map { $pool[($i + $_) % @pool] } 0 .. $i % 4;
    push @tags, $tags[0] if $i % 2;
    my %acct = (plan => ($i % 2 ? "pro" : "free"), seats => $i % 50 + 1);
    my $rec = {
        id => $i + 0, name => $names[$i % @names] . " " . ($i + 0), email => "user$i\@example.com",
        tags => \@tags,
        meta => { score => 0 + sprintf("%.15g", $i / 7 - 100), big => 18446744073709551615 - $i,
                  neg => -9223372036854775807 + $i, nick => ($i % 3 ? "n$i" : undef) },
        note => ($i % 5 ? undef : "note $i \x{2713}"),
        home => $home, work => $home,
        acct => bless({%acct}, 'My::Account'),
    };
    my $plain = { %$rec, acct => {%acct} };
    if (defined $arg{huge} && $i == $arg{huge}) { $rec->{note} = $plain->{note} = "x" x 40_000_000 }
    if (defined $arg{odd} && $i == $arg{odd}) { $rec = $plain = [1, 2, 3] }
    my $doc = defined $header ? $enc->encode($rec, $header) : $enc->encode($rec);
    print $sfh length($doc), "\t$comp,v$v", ($header ? ",header" : ""), "\t", $json->encode($plain), "\n";
    if (defined $arg{port}) { $all .= $doc } else { print $doc }
}
close $sfh or die;
exit 0 unless defined $arg{port};
# Irregular writes: 1 byte, 7 bytes, 64 KiB, random sizes, again; a pause
# every 25 writes, and longer ones at a few points.
my $sock = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$arg{port}", Proto => 'tcp') or die "connect: $!";
srand(7);
my @sizes = (1, 7, 65536, 5000, 300, 300, 300);
my ($at, $k) = (0, 0);
while ($at < length $all) {
    my $size = $sizes[$k % @sizes];
    $size = 1 + int rand $size if $size > 7 && $size < 65536;
    my $w = syswrite($sock, $all, $size, $at);
    die "syswrite: $!" unless defined $w;
    $at += $w;
    select(undef, undef, undef, 0.002) if $k % 25 == 0;
    select(undef, undef, undef, 0.02) if $k < 4 || $k == 200 || $k == 201;
    $k++;
}
close $sock or die;
"#;

/// The records of the streams the tests share.
pub const N: usize = 12_000;

/// One document as Perl reports it.
#[derive(Debug)]
pub struct Doc {
    pub len: usize,
    /// How it was encoded: "zstd,v5,header".
    pub how: String,
    /// What it holds, when it is a record.
    pub rec: Option<Rec>,
}

/// A stream Perl wrote: its bytes, and what Perl says of its documents.
pub struct Stream {
    pub bytes: Vec<u8>,
    pub docs: Vec<Doc>,
}

impl Stream {
    /// Where document `i` starts; `starts()[docs.len()]` is the end.
    pub fn starts(&self) -> Vec<usize> {
        starts(&self.docs)
    }

    /// The first document from `from` on encoded as `how` says.
    pub fn first(&self, from: usize, how: &str) -> usize {
        (from..self.docs.len())
            .find(|&i| self.docs[i].how == how)
            .unwrap_or_else(|| panic!("no {how} document after {from}"))
    }
}

/// Where each of `docs` starts, and where the last ends.
pub fn starts(docs: &[Doc]) -> Vec<usize> {
    let mut at = vec![0];
    for d in docs {
        at.push(at.last().unwrap() + d.len);
    }
    at
}

/// The side file of the run called `name`.
pub fn side_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "sereal-stream-perl-{}-{name}.txt",
        std::process::id()
    ))
}

/// The producer writing `n` documents, with its extra arguments, its side
/// file named by `name`; its stdout is a pipe.
pub fn spawn(n: usize, name: &str, extra: &[String]) -> std::process::Child {
    // The program as `-e`'s argument: no file of it left behind.
    Command::new("perl")
        .args(["-e", PRODUCER, "--"])
        .arg(n.to_string())
        .arg(side_path(name))
        .args(extra)
        .env("PERL_HASH_SEED", "0")
        .env("PERL_PERTURB_KEYS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run perl")
}

/// Waits for the producer and reads what it says of its documents.
pub fn finish(mut child: std::process::Child, name: &str) -> Vec<Doc> {
    assert!(
        child.wait().expect("wait for perl").success(),
        "perl failed"
    );
    let path = side_path(name);
    let text = std::fs::read_to_string(&path).expect("the side file");
    let _ = std::fs::remove_file(&path);
    text.lines()
        .map(|line| {
            let mut f = line.splitn(3, '\t');
            let (len, how, json) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
            Doc {
                len: len.parse().expect("a length"),
                how: how.to_string(),
                rec: serde_json::from_str(json).ok(),
            }
        })
        .collect()
}

/// The stream of `n` documents Perl writes with `extra` arguments.
pub fn produce(n: usize, name: &str, extra: &[&str]) -> Stream {
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    let mut child = spawn(n, name, &extra);
    let mut bytes = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut bytes)
        .unwrap();
    let docs = finish(child, name);
    assert_eq!(docs.iter().map(|d| d.len).sum::<usize>(), bytes.len());
    Stream { bytes, docs }
}

/// The stream of `N` records the tests share.
pub fn base() -> &'static Stream {
    static BASE: OnceLock<Stream> = OnceLock::new();
    BASE.get_or_init(|| produce(N, "base", &[]))
}

/// Checks that `got`, each record with the reader's offset after it, is
/// the records and the cumulative lengths Perl reported.
#[track_caller]
pub fn check(what: &str, got: &[(Rec, usize)], docs: &[Doc]) {
    assert_eq!(got.len(), docs.len(), "{what}: documents read");
    let mut end = 0;
    for (i, ((rec, offset), doc)) in got.iter().zip(docs).enumerate() {
        end += doc.len;
        assert_eq!(
            Some(rec),
            doc.rec.as_ref(),
            "{what}: record {i} ({})",
            doc.how
        );
        assert_eq!(
            *offset, end,
            "{what}: offset after record {i} ({})",
            doc.how
        );
    }
}

/// The record a graph holds, after checking what only a graph shows: the
/// home and work places are one hash, the account is blessed.
#[track_caller]
pub fn graph_rec(doc: &Document) -> Rec {
    let (home, work) = (doc.get("home").unwrap(), doc.get("work").unwrap());
    assert!(home
        .as_strong_ref()
        .unwrap()
        .ptr_eq(work.as_strong_ref().unwrap()));
    let acct = doc.get("acct").unwrap();
    let class = acct.as_strong_ref().unwrap().class().expect("blessed");
    assert_eq!(class.as_bytes(), b"My::Account");
    sereal::from_value(doc).unwrap()
}

/// Checks a raw document: it decodes alone, as a graph and as a record,
/// to the record Perl wrote.
#[track_caller]
pub fn raw_rec(raw: &[u8]) -> Rec {
    let rec: Rec = sereal::from_slice(raw).unwrap();
    assert_eq!(graph_rec(&sereal::decode(raw).unwrap()), rec);
    rec
}

/// How a reader is handed the bytes: in pieces of one size, or of random
/// sizes.
#[derive(Clone, Copy, Debug)]
pub enum Pieces {
    Of(usize),
    Random(u64),
}

impl Pieces {
    pub const ALL: [Pieces; 5] = [
        Pieces::Of(1),
        Pieces::Of(7),
        Pieces::Of(4096),
        Pieces::Of(65536),
        Pieces::Random(0x5eed),
    ];

    /// `bytes` cut into pieces.
    pub fn cut(self, bytes: &[u8]) -> Vec<&[u8]> {
        let mut rng = Rng(match self {
            Pieces::Random(seed) => seed,
            Pieces::Of(_) => 1,
        });
        let mut out = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let n = match self {
                Pieces::Of(n) => n,
                Pieces::Random(_) => 1 + rng.below(9000),
            };
            let (piece, tail) = rest.split_at(n.min(rest.len()));
            out.push(piece);
            rest = tail;
        }
        out
    }

    /// A reader of `bytes` that hands them out in these pieces.
    pub fn reader(self, bytes: &[u8]) -> PieceReader<'_> {
        PieceReader {
            pieces: self.cut(bytes).into_iter(),
            handed: 0,
        }
    }
}

/// A reader that hands out its pieces one per read (a piece larger than
/// the read's buffer is cut), counting the bytes handed out.
pub struct PieceReader<'a> {
    pieces: std::vec::IntoIter<&'a [u8]>,
    pub handed: usize,
}

impl Read for PieceReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let Some(piece) = self.pieces.next() else {
            return Ok(0);
        };
        let n = piece.len().min(out.len());
        out[..n].copy_from_slice(&piece[..n]);
        if n < piece.len() {
            // Hand out the rest at the next read.
            let rest = &piece[n..];
            let mut left: Vec<&[u8]> = vec![rest];
            left.extend(self.pieces.as_slice());
            self.pieces = left.into_iter();
        }
        self.handed += n;
        Ok(n)
    }
}

/// Reads `r` as a stream of records, each with the offset after it: the
/// records until the first error, and the error.
pub fn from_reader_recs(r: impl Read, opts: DecoderOptions) -> Yield {
    let mut it = Deserializer::from_reader_with(r, opts).into_iter::<Rec>();
    until_error(|| {
        let rec = it.next()?;
        Some((rec, it.byte_offset()))
    })
}

/// As [`from_reader_recs`], over a slice.
pub fn from_slice_recs(bytes: &[u8], opts: DecoderOptions) -> Yield {
    let mut it = Deserializer::from_slice_with(bytes, opts).into_iter::<Rec>();
    until_error(|| {
        let rec = it.next()?;
        Some((rec, it.byte_offset()))
    })
}

/// The records `next` yields with their offsets, until the first error
/// (after which it must yield nothing), and that error.
fn until_error(mut next: impl FnMut() -> Option<(sereal::Result<Rec>, usize)>) -> Yield {
    let mut got = Vec::new();
    while let Some((rec, at)) = next() {
        match rec {
            Ok(rec) => got.push((rec, at)),
            Err(e) => {
                assert!(next().is_none(), "the stream is over after {e:?}");
                return (got, Some(e));
            }
        }
    }
    (got, None)
}

/// What an `Incremental` yields of `pieces` by `take` (`next_as`,
/// `next_document`, `next_raw`), each record with the offset after it,
/// until the first error (after which it must yield nothing, even fed
/// more).
pub fn push_recs(
    opts: DecoderOptions,
    pieces: &[&[u8]],
    take: impl Fn(&mut Incremental) -> Option<Result<Rec, Error>>,
) -> Yield {
    let mut inc = Incremental::new(Decoder::new(opts));
    let mut got = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        inc.feed(piece);
        if i + 1 == pieces.len() {
            inc.finish();
        }
        while let Some(rec) = take(&mut inc) {
            match rec {
                Ok(rec) => got.push((rec, inc.offset())),
                Err(e) => {
                    inc.feed(pieces[0]);
                    assert!(take(&mut inc).is_none(), "the stream is over after {e:?}");
                    return (got, Some(e));
                }
            }
        }
    }
    if pieces.is_empty() {
        inc.finish();
    }
    assert!(take(&mut inc).is_none());
    (got, None)
}

/// A take of an `Incremental`, as a record.
pub type Take<'a> = Box<dyn Fn(&mut Incremental) -> Option<Result<Rec, Error>> + 'a>;

/// The three takes of an `Incremental`, as records (a raw document read
/// alone, checked against its bytes' place in `all`).
pub fn takes(all: &[u8]) -> [(&'static str, Take<'_>); 3] {
    [
        (
            "next_as",
            Box::new(|inc: &mut Incremental| inc.next_as::<Rec>()),
        ),
        (
            "next_document",
            Box::new(|inc: &mut Incremental| inc.next_document().map(|d| d.map(|d| graph_rec(&d)))),
        ),
        (
            "next_raw",
            Box::new(move |inc: &mut Incremental| {
                let at = inc.offset();
                inc.next_raw().map(|raw| {
                    raw.map(|raw| {
                        assert_eq!(raw, &all[at..at + raw.len()], "raw bytes at {at}");
                        raw_rec(raw)
                    })
                })
            }),
        ),
    ]
}

/// What `ReadDocuments::next_as` yields of `r`, as [`from_reader_recs`].
pub fn pull_recs(r: impl Read, opts: DecoderOptions) -> Yield {
    let mut docs = ReadDocuments::new(r, Decoder::new(opts));
    let mut got = Vec::new();
    while let Some(rec) = docs.next_as::<Rec>() {
        match rec {
            Ok(rec) => got.push((rec, docs.offset())),
            Err(e) => {
                assert!(
                    docs.next_as::<Rec>().is_none(),
                    "the stream is over after {e:?}"
                );
                return (got, Some(e));
            }
        }
    }
    (got, None)
}
