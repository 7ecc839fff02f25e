//! The view, merge and split against Perl's own Sereal.
//!
//! Paths: for every document of the Perl 5.003 corpus (every profile,
//! Perl's `srl` and its `canon` where that differs) and for random graphs
//! (sharing, cycles, weak references, objects, aliases), paths made from
//! the document's shape (every key of a root hash, non-ASCII ones among
//! them, and what is under the first few, indexes from either end,
//! wildcards, slices, several keys, keys of a root array's first hashes,
//! random walks down the graph and each again with a wildcard or slice,
//! paths that match nothing) are selected with [`View::select`], and each
//! match written with [`Item::to_document`]. Perl walks each path in its
//! own decoding of the document and compares what it finds with its
//! decoding of those documents: as many, the same values, classes,
//! weak-ness and sharing (see `tests/oracle/view.pl` for how). Here, the
//! paths that name one value (keys and indexes only) check
//! [`Item::decode`] against the value at the end of the walk in this
//! crate's decoding of the whole document.
//!
//! Merge: corpus documents and random graphs, in groups, merged with
//! random protocol versions, compressions, string deduplication and
//! flatness, must decode in Perl as the array of the inputs as Perl decodes
//! them (flat: of their arrays' elements).
//!
//! Split: corpus documents whose root is an array, and arrays of random
//! graphs whose elements refer (strongly, weakly, as aliases) to earlier
//! elements' nodes, objects among them, cut into chunks of small, middling
//! and large sizes, at times compressed or in a later protocol version:
//! each chunk decoded by Perl alone must be the next elements of the array
//! as Perl decodes it; no chunk of several elements may exceed the size
//! asked for (uncompressed: compression must not move the cuts).
//!
//! A document a flat merge or a split refuses as referring to its own
//! root array goes to Perl to confirm that it does.
//!
//! One Perl process per test checks all its cases, streamed to it. Without
//! Perl's Sereal the tests print a notice and pass. A failure shows the
//! document (hex), the path, and both sides.
//!
//! [`Item::to_document`]: sereal::view::Item::to_document
//! [`Item::decode`]: sereal::view::Item::decode

mod common;

use common::graphs::{case_seed, Gen, SplitMix};
use sereal::view::{merge, Kind, MergeOptions, Splitter, View};
use sereal::{Body, Compression, EncoderOptions, Key, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::process::Stdio;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracle/view.pl");
const SEED: u64 = 0x71e3_0a1c_1e5e_ed00;
/// Random graphs for the paths, merge groups of them, and arrays of them
/// to split.
const GRAPHS: usize = 1500;
const GRAPH_MERGES: usize = 400;
const GRAPH_SPLITS: usize = 400;
/// Failures shown in full; the others in one line each.
const DETAILED: usize = 10;
/// Failures of known bugs not fixed yet: the test (batch) and the label
/// of the document they are found in, and the bug. Each must still fail
/// there (a fixed bug's entry goes), and nothing else may.
const KNOWN: &[(&str, &str, &str)] = &[];

// ---------------------------------------------------------------- plumbing

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The cases of one test, streamed to one run of view.pl (records of
/// length-prefixed fields, see the script), and the failures found on
/// this side.
struct Batch {
    name: &'static str,
    perl: std::process::Child,
    input: std::io::BufWriter<std::process::ChildStdin>,
    /// What Perl prints, read as it comes so that neither pipe fills.
    output: Option<std::thread::JoinHandle<Vec<u8>>>,
    /// How many of each thing were sent, as view.pl counts them.
    sent: BTreeMap<&'static str, usize>,
    failures: Vec<String>,
    /// The byte strings of the current document's table (the document
    /// first), by content, as records name them.
    table: HashMap<Vec<u8>, u32>,
}

impl Batch {
    fn new(name: &'static str) -> Batch {
        let mut perl = common::perl_command(&[SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start perl tests/oracle/view.pl");
        let input = std::io::BufWriter::with_capacity(1 << 20, perl.stdin.take().unwrap());
        let mut stdout = perl.stdout.take().unwrap();
        let output = std::thread::spawn(move || {
            let mut out = Vec::new();
            stdout.read_to_end(&mut out).expect("read Perl's output");
            out
        });
        Batch {
            name,
            perl,
            input,
            output: Some(output),
            sent: BTreeMap::new(),
            failures: Vec::new(),
            table: HashMap::new(),
        }
    }

    fn count(&mut self, what: &'static str, n: usize) {
        *self.sent.entry(what).or_default() += n;
    }

    fn write(&mut self, bytes: &[u8]) {
        if let Err(e) = self.input.write_all(bytes) {
            panic!(
                "{}: Perl stopped reading ({e}): see its error above",
                self.name
            );
        }
    }

    fn number(&mut self, n: usize) {
        self.write(&u32::try_from(n).expect("a 32-bit length").to_be_bytes());
    }

    fn field(&mut self, bytes: &[u8]) {
        self.number(bytes.len());
        self.write(bytes);
    }

    /// A record: its kind and fields.
    fn record(&mut self, kind: u8, fields: &[&[u8]]) {
        self.write(&[kind]);
        for f in fields {
            self.field(f);
        }
    }

    fn fail(&mut self, why: String) {
        self.failures.push(why);
    }

    /// The document the following paths read.
    fn doc(&mut self, label: &str, bytes: &[u8]) {
        self.count("docs", 1);
        self.record(b'D', &[label.as_bytes(), bytes]);
        self.table.clear();
        self.table.insert(bytes.to_vec(), 0);
    }

    /// The index of `bytes` in the document's table, sent there first if
    /// new.
    fn entry(&mut self, bytes: &[u8]) -> u32 {
        if let Some(&i) = self.table.get(bytes) {
            return i;
        }
        let i = self.table.len() as u32;
        self.record(b'B', &[bytes]);
        self.table.insert(bytes.to_vec(), i);
        i
    }

    /// A path and the view's documents of what it selects, as entries of
    /// the document's table.
    fn path(&mut self, path: &str, entries: &[u32]) {
        self.count("paths", 1);
        self.count("matches", entries.len());
        self.record(b'P', &[path.as_bytes()]);
        self.number(entries.len());
        for &i in entries {
            self.number(i as usize);
        }
    }

    /// Documents after a record's fixed fields: their count, and each.
    fn documents(&mut self, docs: &[&[u8]]) {
        self.number(docs.len());
        for d in docs {
            self.field(d);
        }
    }

    fn merge(&mut self, label: &str, flat: bool, out: &[u8], inputs: &[&[u8]]) {
        self.count("merges", 1);
        self.count("inputs", inputs.len());
        self.record(
            b'M',
            &[label.as_bytes(), if flat { b"1" } else { b"0" }, out],
        );
        self.documents(inputs);
    }

    fn split(&mut self, label: &str, doc: &[u8], chunks: &[Vec<u8>]) {
        self.count("splits", 1);
        self.count("chunks", chunks.len());
        self.record(b'S', &[label.as_bytes(), doc]);
        self.documents(&chunks.iter().map(Vec::as_slice).collect::<Vec<_>>());
    }

    /// A document refused as referring to its own root array.
    fn rootref(&mut self, label: &str, doc: &[u8]) {
        self.count("rootrefs", 1);
        self.record(b'R', &[label.as_bytes(), doc]);
    }

    /// Waits for view.pl to check every case and fails the test on any
    /// failure, of either side; returns what Perl counted.
    fn run(mut self) -> BTreeMap<String, usize> {
        let started = std::time::Instant::now();
        if let Err(e) = self.input.flush() {
            panic!(
                "{}: Perl stopped reading ({e}): see its error above",
                self.name
            );
        }
        drop(self.input);
        let stdout = self.output.take().unwrap().join().expect("Perl's output");
        let status = self.perl.wait().expect("wait for perl");
        assert!(
            status.success(),
            "{}: view.pl exited with {status}",
            self.name
        );
        let (perl_failures, counted) = perl_report(&String::from_utf8_lossy(&stdout));
        let known: Vec<_> = KNOWN.iter().filter(|k| k.0 == self.name).collect();
        let (expected, perl_failures): (Vec<String>, Vec<String>) = perl_failures
            .into_iter()
            .partition(|f| known.iter().any(|k| in_document(f, k.1)));
        for f in &expected {
            let first = f.lines().next().unwrap_or("");
            eprintln!("KNOWN view_perl {}: Perl: {first}", self.name);
        }
        for k in &known {
            assert!(
                expected.iter().any(|f| in_document(f, k.1)),
                "{}: {} no longer fails ({}): remove it from KNOWN",
                self.name,
                k.1,
                k.2
            );
        }
        let perl_failures: Vec<String> =
            perl_failures.iter().map(|f| format!("Perl: {f}")).collect();
        let all: Vec<&String> = self.failures.iter().chain(&perl_failures).collect();
        for (i, f) in all.iter().enumerate() {
            if i < DETAILED {
                eprintln!("FAIL view_perl {}: {f}\n", self.name);
            } else {
                eprintln!(
                    "FAIL view_perl {}: {}",
                    self.name,
                    f.lines().next().unwrap_or("")
                );
            }
        }
        eprintln!(
            "view_perl {}: Perl checked {counted:?}, {:.1?} after the last case",
            self.name,
            started.elapsed()
        );
        assert!(
            all.is_empty(),
            "{}: {} failures (see FAIL above)",
            self.name,
            all.len()
        );
        for (what, n) in &self.sent {
            assert_eq!(
                counted.get(*what),
                Some(n),
                "{}: Perl's count of {what}",
                self.name
            );
        }
        counted
    }
}

/// The failures view.pl reported (each with its detail lines) and what it
/// counted.
fn perl_report(stdout: &str) -> (Vec<String>, BTreeMap<String, usize>) {
    let mut failures: Vec<String> = Vec::new();
    let mut counted = BTreeMap::new();
    for line in stdout.lines() {
        if let Some(detail) = line.strip_prefix("    ") {
            if let Some(last) = failures.last_mut() {
                last.push_str("\n    ");
                last.push_str(detail);
            }
        } else if let Some(fail) = line.strip_prefix("FAIL ") {
            failures.push(fail.to_string());
        } else if let Some(summary) = line.strip_prefix("summary ") {
            for field in summary.split(' ') {
                let (k, v) = field.split_once('=').expect("name=count");
                counted.insert(k.to_string(), v.parse::<usize>().expect("a count"));
            }
        }
    }
    (failures, counted)
}

/// Whether a failure view.pl reported is in the document (or case)
/// labelled `label`.
fn in_document(failure: &str, label: &str) -> bool {
    failure
        .strip_prefix(label)
        .is_some_and(|rest| rest.starts_with([' ', ':']))
}

/// Every document of the corpus, every profile: Perl's `srl`, and its
/// `canon` where that differs; with a label naming it.
fn corpus_documents() -> Vec<(String, Vec<u8>)> {
    let mut docs = Vec::new();
    for profile in common::PROFILES {
        let cases =
            sereal::conformance::read_cases(&common::corpus(profile)).expect("read the corpus");
        for c in cases {
            let srl = c.srl.expect("every case has its srl");
            if let Some(canon) = c.canon.filter(|canon| *canon != srl) {
                docs.push((format!("{profile}#{}/canon", c.id), canon));
            }
            docs.push((format!("{profile}#{}/srl", c.id), srl));
        }
    }
    docs
}

/// A compression `version` can have, None most often.
fn compression(rng: &mut SplitMix, version: u8) -> Compression {
    let all = [
        Compression::None,
        Compression::None,
        Compression::Snappy,
        Compression::Zlib,
        Compression::Zstd,
    ];
    let n = if version >= 3 { all.len() } else { 3 };
    all[rng.below(n)]
}

/// Encoder options for a random graph: its version, any compression
/// (even of small bodies), and at times string deduplication or
/// canonical order. Not `aliased_dedupe_strings`: it writes an `ALIAS`
/// of a string a reference refers to, which Perl's decoder refuses
/// ("ALIAS tag not inside container"; Perl's encoder writes the same);
/// the corpus has Perl's documents written with it.
fn encoder_options(rng: &mut SplitMix, version: u8) -> EncoderOptions {
    let o = EncoderOptions::new()
        .protocol_version(version)
        .compress(compression(rng, version))
        .compress_threshold(0);
    match rng.below(4) {
        0 => o.dedupe_strings(true),
        1 => o.canonical(true),
        _ => o,
    }
}

/// A random graph's document and its label.
fn graph_document(rng: &mut SplitMix, i: usize) -> (String, Vec<u8>) {
    let seed = case_seed(SEED, i);
    let (root, version) = Gen::graph(seed);
    let bytes = sereal::encode_with(&root, &encoder_options(rng, version)).expect("encode a graph");
    root.dismantle();
    (format!("graph#{seed:#x}"), bytes)
}

/// A document whose root is an array of random graphs that refer to each
/// other's nodes, and its label.
fn elements_document(rng: &mut SplitMix, i: usize, n: usize) -> (String, Vec<u8>) {
    let seed = case_seed(SEED ^ 0xe1e, i);
    let (elements, version) = Gen::elements(seed, n);
    let root = Value::array(elements);
    let bytes =
        sereal::encode_with(&root, &encoder_options(rng, version)).expect("encode an array");
    root.dismantle();
    (format!("elements#{seed:#x}x{n}"), bytes)
}

// ------------------------------------------------------------------- paths

/// A key as Perl's characters: UTF-8 text, or Latin-1 bytes.
fn key_text(k: &Key) -> Option<String> {
    if k.is_utf8() {
        k.as_str().map(str::to_owned)
    } else {
        Some(k.as_bytes().iter().map(|&b| char::from(b)).collect())
    }
}

/// What a path step reads in `v`: the elements of the array, or the
/// entries of the hash, it is or refers to (through a reference, weak or
/// not, an object or an alias), as Perl's `->` reads them.
fn children(v: &Value) -> Option<Vec<(Option<String>, Value)>> {
    let mut v = v.clone();
    for _ in 0..8 {
        let Value::Alias(cell) = &v else { break };
        let inner = match &*cell.body() {
            Body::Scalar(inner) => inner.clone(),
            _ => break,
        };
        v = inner;
    }
    let node = v.node()?;
    let body = node.body();
    match &*body {
        Body::Array(a) => Some(a.iter().map(|c| (None, c.clone())).collect()),
        Body::Hash(h) => Some(
            h.entries()
                .iter()
                .filter_map(|(k, c)| Some((Some(key_text(k)?), c.clone())))
                .collect(),
        ),
        _ => None,
    }
}

/// The path step to the entry `k`, in one of the ways the language
/// writes it.
fn key_step(k: &str, rng: &mut SplitMix) -> String {
    let plain = !k.is_empty()
        && !k
            .chars()
            .any(|c| ".[]'\",*:".contains(c) || c.is_whitespace());
    let bare = plain && !k.starts_with(|c: char| c.is_ascii_digit() || "-?(".contains(c));
    match rng.below(4) {
        0 if plain => format!(".{k}"),
        1 if bare => format!("[{k}]"),
        2 => format!("[\"{}\"]", k.replace('\\', "\\\\").replace('"', "\\\"")),
        _ => format!("[{}]", quoted(k)),
    }
}

/// `k` in single quotes, as the path language quotes it.
fn quoted(k: &str) -> String {
    format!("'{}'", k.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The step to element `i` of `n`, from the start or the end.
fn index_step(i: usize, n: usize, rng: &mut SplitMix) -> String {
    if rng.chance(0.3) {
        format!("[-{}]", n - i)
    } else {
        format!("[{i}]")
    }
}

/// Paths for any document, most of them for an array root, some for a
/// hash, some matching nothing.
const FIXED_PATHS: [&str; 21] = [
    "$[0]",
    "$[-1]",
    "$[*]",
    "$.*",
    "$[1:3]",
    "$[::-1]",
    "$[::2]",
    "$[-2:]",
    "$[:1:-2]",
    "$[0,-1,0]",
    "$[99]",
    "$[-99]",
    "$[*][0]",
    "$[*][*]",
    "$[*].*",
    "$.*[-1]",
    "$.*.*",
    "$.absent",
    "$['no such key']",
    "$[*]['absent','']",
    "$[0][0][0]",
];

/// The paths to check in a document whose decoding is `root`: with the
/// value each selects when it names one (keys and indexes only).
fn paths_for(root: &Value, rng: &mut SplitMix) -> Vec<(String, Option<Value>)> {
    let mut out: Vec<(String, Option<Value>)> =
        FIXED_PATHS.iter().map(|p| (p.to_string(), None)).collect();
    out.push(("$".into(), Some(root.clone())));
    let top = children(root).unwrap_or_default();
    // each key of a root hash, and what is under the first few
    for (i, (k, v)) in top.iter().enumerate() {
        let Some(k) = k else { break };
        let step = key_step(k, rng);
        out.push((format!("${step}"), Some(v.clone())));
        if i < 6 {
            for tail in ["[*]", ".*", "[0]", "[-1]", "[1:]", "[::-1]"] {
                out.push((format!("${step}{tail}"), None));
            }
            if let Some((Some(k2), v2)) = children(v).unwrap_or_default().into_iter().next() {
                out.push((format!("${step}{}", key_step(&k2, rng)), Some(v2)));
            }
        }
    }
    if let Some(first) = top.iter().find_map(|(k, _)| k.as_ref()) {
        out.push((format!("$[{0},'absent',{0}]", quoted(first)), None));
    }
    // keys of the first hashes of a root array, from each element
    for (i, (_, v)) in top
        .iter()
        .enumerate()
        .take(3)
        .filter(|(_, (k, _))| k.is_none())
    {
        for (k, _) in children(v).unwrap_or_default().iter().take(4) {
            let Some(k) = k else { break };
            let step = key_step(k, rng);
            out.push((format!("$[*]{step}"), None));
            out.push((format!("$[{i}]{step}"), None));
        }
    }
    // random walks down the graph, and each again with a step made a
    // wildcard or a slice
    for _ in 0..4 {
        let mut steps: Vec<(String, bool)> = Vec::new();
        let mut v = root.clone();
        for _ in 0..1 + rng.below(6) {
            let kids = children(&v).unwrap_or_default();
            if kids.is_empty() {
                break;
            }
            let i = rng.below(kids.len());
            let (k, child) = &kids[i];
            steps.push(match k {
                Some(k) => (key_step(k, rng), true),
                None => (index_step(i, kids.len(), rng), false),
            });
            v = child.clone();
        }
        let path = |steps: &[(String, bool)]| {
            format!(
                "${}",
                steps.iter().map(|s| s.0.as_str()).collect::<String>()
            )
        };
        out.push((path(&steps), Some(v)));
        if !steps.is_empty() {
            let at = rng.below(steps.len());
            let hash = steps[at].1;
            steps[at].0 = match rng.below(3) {
                0 if hash => ".*".into(),
                0 => "[*]".into(),
                1 => "[1:-1]".into(),
                _ => "[::-2]".into(),
            };
            out.push((path(&steps), None));
            steps.push(("['absent']".into(), true));
            out.push((path(&steps), None));
        }
    }
    // each path once, with the value it names if any way to it knew it
    let mut unique: Vec<(String, Option<Value>)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for (path, expected) in out {
        match at.get(&path) {
            Some(&i) => {
                if unique[i].1.is_none() {
                    unique[i].1 = expected;
                }
            }
            None => {
                at.insert(path.clone(), unique.len());
                unique.push((path, expected));
            }
        }
    }
    unique
}

/// Sends the document and its paths, with what the view selects, to the
/// batch; checks here that the paths that name one value decode to it.
/// Returns how many were checked here.
fn check_paths(batch: &mut Batch, label: &str, bytes: &[u8], rng: &mut SplitMix) -> usize {
    let (view, doc) = match View::new(bytes).and_then(|v| Ok((v, sereal::decode(bytes)?))) {
        Ok(both) => both,
        Err(e) => {
            batch.fail(failure(label, e, bytes));
            return 0;
        }
    };
    batch.doc(label, bytes);
    let mut made: HashMap<sereal::Position, Result<u32, String>> = HashMap::new();
    let mut decoded = 0;
    for (path, expected) in paths_for(doc.root(), rng) {
        let what = format!("{label} {path:?}");
        let items = match view.select(&path) {
            Ok(items) => items,
            Err(e) => {
                batch.fail(failure(&what, format!("select: {e}"), bytes));
                continue;
            }
        };
        // an item met again (by another path) is written and sent once
        let entries: Result<Vec<u32>, String> = items
            .iter()
            .map(|i| match made.get(&i.position()) {
                Some(entry) => entry.clone(),
                None => {
                    let entry = i.to_document().map(|d| batch.entry(&d));
                    let entry = entry.map_err(|e| format!("to_document: {e}"));
                    made.insert(i.position(), entry.clone());
                    entry
                }
            })
            .collect();
        match entries {
            Ok(entries) => batch.path(&path, &entries),
            Err(e) => batch.fail(failure(&what, e, bytes)),
        }
        let Some(expected) = expected else { continue };
        decoded += 1;
        let why = match items.as_slice() {
            [item] => match item.decode() {
                Ok(found) if found.perl_eq(&expected) => continue,
                Ok(found) => format!(
                    "Item::decode differs from the whole document's value there\n    \
                     decoded: {:?}\n    whole:   {expected:?}",
                    *found
                ),
                Err(e) => format!("Item::decode: {e}"),
            },
            _ => format!("{} matches of a path to one value", items.len()),
        };
        batch.fail(failure(&what, why, bytes));
    }
    decoded
}

/// A failure found here: what was checked, why it failed, and the
/// document it read.
fn failure(what: &str, why: impl std::fmt::Display, doc: &[u8]) -> String {
    format!("{what}: {why}\n    document: {}", hex(doc))
}

#[test]
fn corpus_paths_select_what_perl_finds() {
    if !common::perl_sereal("view_perl corpus paths") {
        return;
    }
    let mut rng = SplitMix(SEED);
    let mut batch = Batch::new("corpus paths");
    let mut decoded = 0;
    for (label, bytes) in corpus_documents() {
        decoded += check_paths(&mut batch, &label, &bytes, &mut rng);
    }
    let counted = batch.run();
    eprintln!("view_perl corpus paths: {decoded} items decoded here against the whole document");
    assert!(
        counted["docs"] > 19_000 && counted["paths"] > 300_000,
        "{counted:?}"
    );
}

#[test]
fn graph_paths_select_what_perl_finds() {
    if !common::perl_sereal("view_perl graph paths") {
        return;
    }
    let mut rng = SplitMix(SEED ^ 1);
    let mut batch = Batch::new("graph paths");
    let mut decoded = 0;
    for i in 0..GRAPHS {
        let (label, bytes) = graph_document(&mut rng, i);
        decoded += check_paths(&mut batch, &label, &bytes, &mut rng);
    }
    let counted = batch.run();
    eprintln!("view_perl graph paths: {decoded} items decoded here against the whole document");
    assert_eq!(counted["docs"], GRAPHS);
}

// ------------------------------------------------------------------- merge

/// Merges `group` with random options and sends the result. An input a
/// flat merge refuses (its root array is referred to from inside it) is
/// sent to Perl to confirm that, and the others are merged without it.
fn merge_case(batch: &mut Batch, rng: &mut SplitMix, group: &[(String, Vec<u8>)]) {
    let mut inputs: Vec<(&str, &[u8])> = group
        .iter()
        .map(|(l, d)| (l.as_str(), d.as_slice()))
        .collect();
    let mut newest = 1;
    let mut arrays = true;
    for (label, doc) in &inputs {
        match View::new(doc).and_then(|v| Ok((v.version(), v.root().kind()?))) {
            Ok((version, kind)) => {
                newest = newest.max(version);
                arrays &= kind == Kind::Array;
            }
            Err(e) => return batch.fail(failure(label, e, doc)),
        }
    }
    let version = newest + rng.below(usize::from(6 - newest)) as u8;
    let flat = arrays && rng.chance(0.5);
    let opts = MergeOptions::new()
        .flat(flat)
        .protocol_version(version)
        .compress(compression(rng, version))
        .compress_threshold(if rng.chance(0.5) { 0 } else { 1024 })
        .dedupe_strings(rng.chance(0.7));
    if flat {
        inputs.retain(|&(label, doc)| match merge(&[doc], &opts) {
            Err(e) if e.to_string().contains("refers to its root array") => {
                batch.rootref(label, doc);
                false
            }
            _ => true,
        });
    }
    let label = inputs.iter().map(|(l, _)| *l).collect::<Vec<_>>().join("+");
    let docs: Vec<&[u8]> = inputs.iter().map(|(_, d)| *d).collect();
    match merge(&docs, &opts) {
        Ok(out) => batch.merge(&label, flat, &out, &docs),
        Err(e) => batch.fail(format!(
            "{label}: merge with {opts:?}: {e}\n{}",
            docs.iter()
                .map(|d| format!("    input: {}", hex(d)))
                .collect::<Vec<_>>()
                .join("\n")
        )),
    }
}

#[test]
fn corpus_merges_decode_in_perl_as_their_inputs() {
    if !common::perl_sereal("view_perl corpus merges") {
        return;
    }
    let mut rng = SplitMix(SEED ^ 2);
    let mut batch = Batch::new("corpus merges");
    let docs = corpus_documents();
    let mut rest = docs.as_slice();
    while !rest.is_empty() {
        let (group, after) = rest.split_at((1 + rng.below(6)).min(rest.len()));
        merge_case(&mut batch, &mut rng, group);
        rest = after;
    }
    let counted = batch.run();
    assert!(
        counted["inputs"] + counted.get("rootrefs").unwrap_or(&0) >= docs.len(),
        "{counted:?}"
    );
}

#[test]
fn graph_merges_decode_in_perl_as_their_inputs() {
    if !common::perl_sereal("view_perl graph merges") {
        return;
    }
    let mut rng = SplitMix(SEED ^ 3);
    let mut batch = Batch::new("graph merges");
    for i in 0..GRAPH_MERGES {
        let group: Vec<(String, Vec<u8>)> = (0..1 + rng.below(5))
            .map(|j| {
                let case = i * 8 + j;
                if rng.chance(0.5) {
                    graph_document(&mut rng, case)
                } else {
                    let n = rng.below(12);
                    elements_document(&mut rng, case, n)
                }
            })
            .collect();
        merge_case(&mut batch, &mut rng, &group);
    }
    batch.run();
}

// ------------------------------------------------------------------- split

/// Splits `bytes` into chunks of `size` (in the chunk protocol `version`
/// when given), checks their sizes, and sends them (compressed with
/// `compress`) to the batch. A document refused as referring to its root
/// array is sent to Perl to confirm that.
fn split_case(
    batch: &mut Batch,
    label: &str,
    bytes: &[u8],
    size: usize,
    compress: Compression,
    version: Option<u8>,
) {
    let what = format!("{label}/chunks-of-{size}/{compress:?}/version-{version:?}");
    let chunks = |compress: Compression| -> sereal::Result<Vec<Vec<u8>>> {
        let mut s = Splitter::new(View::new(bytes)?, size)?
            .compress(compress)
            .compress_threshold(0);
        if let Some(v) = version {
            s = s.protocol_version(v);
        }
        s.collect()
    };
    let counts = |chunks: &[Vec<u8>]| -> sereal::Result<Vec<usize>> {
        chunks
            .iter()
            .map(|c| Ok(View::new(c)?.root().len()?.unwrap_or(0)))
            .collect()
    };
    let plain = match chunks(Compression::None) {
        Ok(plain) => plain,
        Err(e) if e.to_string().contains("refers to the array being split") => {
            return batch.rootref(label, bytes)
        }
        Err(e) => return batch.fail(failure(&what, e, bytes)),
    };
    let plain_counts = match counts(&plain) {
        Ok(c) => c,
        Err(e) => return batch.fail(failure(&what, format!("a chunk's view: {e}"), bytes)),
    };
    for (c, (chunk, &n)) in plain.iter().zip(&plain_counts).enumerate() {
        if chunk.len() > size && n > 1 {
            let why = format!("chunk {c} has {} bytes and {n} elements", chunk.len());
            batch.fail(failure(&what, why, bytes));
        }
    }
    let sent = if compress == Compression::None {
        plain
    } else {
        // compression does not move the cuts
        match chunks(compress).and_then(|c| Ok((counts(&c)?, c))) {
            Ok((n, c)) if n == plain_counts => c,
            Ok((n, _)) => {
                let why =
                    format!("compressed chunks of {n:?} elements, plain ones of {plain_counts:?}");
                return batch.fail(failure(&what, why, bytes));
            }
            Err(e) => return batch.fail(failure(&what, e, bytes)),
        }
    };
    batch.split(&what, bytes, &sent);
}

/// Splits one document at a small, a middling and (at times) a size
/// larger than it, at times compressed or in a later protocol version.
fn split_sizes(batch: &mut Batch, rng: &mut SplitMix, label: &str, bytes: &[u8]) {
    let doc_version = match View::new(bytes) {
        Ok(view) => view.version(),
        Err(e) => return batch.fail(failure(label, e, bytes)),
    };
    let mut sizes = vec![1 + rng.below(64), 64 + rng.below(1024)];
    if rng.chance(0.3) {
        sizes.push(bytes.len() * 2 + 64);
    }
    for size in sizes {
        let version = rng
            .chance(0.2)
            .then(|| doc_version + rng.below(usize::from(6 - doc_version)) as u8);
        let compress = if rng.chance(0.3) {
            compression(rng, version.unwrap_or(doc_version))
        } else {
            Compression::None
        };
        split_case(batch, label, bytes, size, compress, version);
    }
}

#[test]
fn corpus_splits_decode_in_perl_as_their_slices() {
    if !common::perl_sereal("view_perl corpus splits") {
        return;
    }
    let mut rng = SplitMix(SEED ^ 4);
    let mut batch = Batch::new("corpus splits");
    let mut arrays = 0;
    for (label, bytes) in corpus_documents() {
        let Ok(Kind::Array) = View::new(&bytes).and_then(|v| v.root().kind()) else {
            continue;
        };
        arrays += 1;
        split_sizes(&mut batch, &mut rng, &label, &bytes);
    }
    let counted = batch.run();
    eprintln!("view_perl corpus splits: {arrays} corpus documents with a root array");
    assert!(arrays > 5_000, "{arrays} documents with a root array");
    assert!(
        counted["splits"] + counted.get("rootrefs").unwrap_or(&0) >= 2 * arrays,
        "{counted:?}"
    );
}

#[test]
fn graph_splits_decode_in_perl_as_their_slices() {
    if !common::perl_sereal("view_perl graph splits") {
        return;
    }
    let mut rng = SplitMix(SEED ^ 5);
    let mut batch = Batch::new("graph splits");
    for i in 0..GRAPH_SPLITS {
        let n = 2 + rng.below(60);
        let (label, bytes) = elements_document(&mut rng, i, n);
        split_sizes(&mut batch, &mut rng, &label, &bytes);
    }
    let counted = batch.run();
    assert!(counted["splits"] >= 2 * GRAPH_SPLITS, "{counted:?}");
}

// ------------------------------------------------------------- regressions
//
// What the oracle found, in Perl's own bytes, with what Perl reads there;
// these need no Perl.

/// Perl writes `$x = \$x` as a tracked `REFP` that names itself, which
/// the decoder reads (it registers an item when it reads its tag); the
/// view took the offset for one out of range.
#[test]
fn a_reference_to_itself_reads_as_the_decoder_reads_it() {
    // Perl: my $x; $x = \$x; encode($x), and encode(\$x)
    for bytes in [
        &b"=\xF3rl\x05\x00\xa9\x01"[..],
        b"=\xF3rl\x03\x00\x28\xa9\x02",
    ] {
        let view = View::new(bytes).unwrap();
        view.check().unwrap();
        assert_eq!(view.root().kind().unwrap(), Kind::Reference);
        assert!(view.select("$[*]").unwrap().is_empty());
        let whole = sereal::decode(bytes).unwrap();
        assert!(view.root().decode().unwrap().perl_eq(&whole));
        let alone = sereal::decode(&view.root().to_document().unwrap()).unwrap();
        assert!(alone.perl_eq(&whole));
    }
}

/// A path may reach, through a `REFP`, a value whose bytes are inside a
/// reference to a scalar; when that value refers outside itself it is
/// found in the decoded whole document, whose walk to it went only
/// through arrays and hashes and did not find it.
#[test]
fn an_item_inside_a_scalar_reference_is_found_in_the_whole_document() {
    // Perl: my $a = []; push @$a, $a; my $h = {k => $a}; encode([\$h, $a])
    let bytes = b"=\xF3rl\x05\x00\x42\x28\x51\x61k\x28\xab\x01\x29\x07\x29\x07";
    let view = View::new(bytes).unwrap();
    let item = view.select("$[1][0]").unwrap()[0]; // $a->[0], a reference to $a
    let whole = sereal::decode(bytes).unwrap();
    let expected = whole.at(1).unwrap().at(0).unwrap();
    assert!(item.decode().unwrap().perl_eq(&expected));
    let alone = sereal::decode(&item.to_document().unwrap()).unwrap();
    assert!(alone.perl_eq(&expected));
}

/// A tracked `REFP` to an item of an earlier chunk is written as the item
/// copied in, and what refers to the `REFP` refers to what is written
/// there: it keeps the track flag.
#[test]
fn a_tracked_reference_copied_into_a_chunk_stays_tracked() {
    // Perl's corpus: my ($x, $y); $x = \$y; $y = \$x; [$x, $y] with $y
    // aliased (two scalars that refer to each other)
    let bytes = b"=\xF3rl\x04\x00\x42\xa8\xa9\x02\x2e\x03";
    let whole = sereal::decode(bytes).unwrap();
    let chunks = Splitter::new(View::new(bytes).unwrap(), 1).unwrap();
    for (i, chunk) in chunks.enumerate() {
        let chunk = sereal::decode(&chunk.unwrap()).unwrap();
        assert!(
            chunk.at(0).unwrap().perl_eq(&whole.at(i).unwrap()),
            "chunk {i}"
        );
    }
}

/// An object may bless an item written before it (a `REFP` after the
/// class): a reference to that item copied into a later chunk is written
/// as an object of that class.
#[test]
fn an_item_blessed_after_it_is_written_keeps_its_class_in_a_later_chunk() {
    // Perl's corpus: my @a = ("foo"); [$a[0], bless(\$a[0], 'BlessedArrayCheck'), \$a[0]]
    let bytes = b"=\xF3rl\x04\x00\x43\xe3foo\x2c\x71BlessedArrayCheck\x29\x02\x29\x02";
    let chunks: Vec<Vec<u8>> = Splitter::new(View::new(bytes).unwrap(), 1)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(chunks.len(), 3);
    for chunk in &chunks[1..] {
        let object = sereal::decode(chunk)
            .unwrap()
            .at(0)
            .unwrap()
            .node()
            .unwrap();
        assert_eq!(object.class().unwrap().to_string(), "BlessedArrayCheck");
    }
}

/// A weak reference to a scalar that an `ALIAS` makes an element of the
/// array stays weak in a chunk that holds both: the alias holds the
/// scalar.
#[test]
fn a_weak_reference_to_an_aliased_scalar_stays_weak_in_a_chunk() {
    // Perl's corpus, "weak scalar cross": [$x, $y] with $x a weak
    // reference to $y, $y one to $x, and $y the array's second element
    let bytes = b"=srl\x01\x00\x42\xb0\x28\xb0\x29\x07\x2e\x09";
    let whole = sereal::decode(bytes).unwrap();
    let mut chunks = Splitter::new(View::new(bytes).unwrap(), 1000).unwrap();
    let chunk = sereal::decode(&chunks.next().unwrap().unwrap()).unwrap();
    // the first element is the scalar $x (tracked), holding a weak reference
    let x = chunk.at(0).unwrap().node().unwrap();
    assert!(
        matches!(&*x.body(), Body::Scalar(Value::Weak(_))),
        "{:?}",
        *chunk
    );
    assert!(chunk.perl_eq(&whole));
}

/// A weak reference to an item of an earlier chunk is written strong, the
/// item copied in; a `WEAKEN` so dropped gives its track flag to what is
/// written in its place, which what refers to it names.
#[test]
fn a_tracked_weak_reference_made_strong_in_a_chunk_stays_tracked() {
    // Perl's corpus, "weak scalar cross": [$x, $y] with $x a weak
    // reference to $y, $y one to $x, and $y the array's second element
    let bytes = b"=\xF3rl\x03\x00\x28\x2b\x02\xb0\x28\xb0\x29\x04\x2e\x06";
    let chunks: Vec<Vec<u8>> = Splitter::new(View::new(bytes).unwrap(), 1)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(chunks.len(), 2);
    // the second chunk is [$y], $y's reference to $x (copied in) strong
    let chunk = sereal::decode(&chunks[1]).unwrap();
    let y = chunk.at(0).unwrap().node().unwrap();
    assert!(
        matches!(&*y.body(), Body::Scalar(Value::Ref(_))),
        "{:?}",
        *chunk
    );
}

/// A chunk that holds an item of an earlier chunk as an element (an
/// `ALIAS`, copied in as it is: an element carries no class) and refers
/// to it writes the item's class where it refers to it.
#[test]
fn an_aliased_object_copied_into_a_chunk_keeps_its_class() {
    // Perl: my $c = "x" x 20; my $obj = bless \$c, "C1";
    // encode(sub { \@_ }->($obj, $c, \$c)): the object, $c, \$c
    let bytes = b"=\xF3rl\x05\x00\x43\x2c\x62C1\x28\xf4xxxxxxxxxxxxxxxxxxxx\x2e\x07\x29\x07";
    let chunks: Vec<Vec<u8>> = Splitter::new(View::new(bytes).unwrap(), 43)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(chunks.len(), 2);
    // the second chunk is [$c, \$c]
    let chunk = sereal::decode(&chunks[1]).unwrap();
    let object = chunk.at(1).unwrap().node().unwrap();
    assert_eq!(object.class().map(|c| c.to_string()).as_deref(), Some("C1"));
    // Perl: my $c; $c = \$c; bless $c, "C1"; encode(sub { \@_ }->(\$c,
    // $c)): the second, $c, refers to itself, where its class is written
    let bytes = b"=\xF3rl\x05\x00\x42\x2c\x62C1\x28\xa9\x07\x2e\x07";
    let mut chunks = Splitter::new(View::new(bytes).unwrap(), 1).unwrap().skip(1);
    let chunk = sereal::decode(&chunks.next().unwrap().unwrap()).unwrap();
    let object = chunk.at(0).unwrap().node().unwrap();
    assert_eq!(object.class().map(|c| c.to_string()).as_deref(), Some("C1"));
}

/// A copy writes the string a `COPY` outside it names once, where it is
/// first needed; a tracked `COPY` (an aliased scalar) is written as a
/// tracked string, which no later `COPY` may name: a decoder reads a
/// `COPY` by reading its target in place, tracking that scalar there
/// instead, and an `ALIAS` of the first one would alias the second.
#[test]
fn a_copy_never_names_a_tracked_string() {
    // Perl: my $s = "dup" x 10; my $x = $s; encode(sub { \@_ }->($s, $x,
    // \"$s", $x, \$x), {dedupe_strings => 1}): the string, $x (a COPY of
    // it), a reference to another COPY, $x again, a reference to $x
    let bytes = b"=\xF3rl\x05\x00\x45\x7edupdupdupdupdupdupdupdupdupdup\
                  \xaf\x02\x28\x2f\x02\x2e\x21\x29\x21";
    let whole = sereal::decode(bytes).unwrap();
    let mut next = 0;
    // chunks after the first copy the string in
    for chunk in Splitter::new(View::new(bytes).unwrap(), 47).unwrap() {
        let chunk = sereal::decode(&chunk.unwrap()).unwrap();
        let n = chunk.as_array().unwrap().len();
        let slice = (next..next + n).map(|i| whole.at(i).unwrap());
        let slice = Value::array(slice.collect::<Vec<_>>());
        assert!(
            chunk.perl_eq(&slice),
            "from {next}: {:?}, {slice:?}",
            *chunk
        );
        next += n;
    }
    assert_eq!(next, 5);
}

/// A second reference to an object a FREEZE callback wrote (a `REFP` to
/// what it froze), copied into a later chunk, is written as that object
/// again: `OBJECT_FREEZE`, for THAW to read.
#[test]
fn a_frozen_object_copied_into_a_chunk_stays_frozen() {
    // Perl's corpus, "frozen object shared" (freeze_callbacks): a Frozen
    // object twice, and another
    let bytes = b"=\xF3rl\x05\x00\x43\x32\x66Frozen\x28\xab\x02\x05\x65extra\x29\x0b\
                  \x33\x03\x28\x2b\x02\x06\x65extra";
    let chunks: Vec<Vec<u8>> = Splitter::new(View::new(bytes).unwrap(), 1)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(chunks.len(), 3);
    for chunk in &chunks {
        let object = sereal::decode(chunk)
            .unwrap()
            .at(0)
            .unwrap()
            .node()
            .unwrap();
        assert_eq!(object.class().unwrap().to_string(), "Frozen");
        assert!(
            matches!(&*object.body(), Body::Frozen(_)),
            "{:?}",
            *object.body()
        );
    }
}
