//! Conformance checks against documents written by Perl's Sereal.
//!
//! A corpus file is zstd-compressed JSON Lines, one case a line, with the
//! fields `id`, `name`, `profile`, `options` (Perl's encoder options),
//! `srl` (base64 of Perl's encoding of the case) and `canon` (base64 of
//! Perl's re-encoding of its own decoding of `srl`). For every case:
//!
//! 1. `canon` decodes, and re-encoding it with `options` (and its user
//!    header data, if it has any) gives Perl's exact bytes (for compressed
//!    documents: the same header and the same decompressed body, since
//!    compressor libraries differ in their output);
//! 2. `srl`, decoded as Perl 5.003's decoder read it (FREEZE objects thawed
//!    in [`ThawOrder::Perl5003`]), gives a graph
//!    equal to the decoded `canon` (hashes compared as maps, identity and
//!    sharing respected), and the same user header data;
//! 3. a case without `canon` (Perl could not decode its own output) must
//!    still decode without error.
//!
//! Cases encoded with `freeze_callbacks` use the corpus's FREEZE/THAW class
//! `Frozen`: an object is a blessed hash `{v => X}`, FREEZE returns
//! `(X, "extra")`, THAW makes `bless {v => $data[0]}`. [`check`] registers
//! equivalent handlers ([`frozen_handlers`]).

use crate::compress::Compression;
use crate::decoder::{Decoder, DecoderOptions, Header, ThawOrder};
use crate::encoder::{Encoder, EncoderOptions};
use crate::error::{Error, ErrorKind, Result};
use crate::value::{Body, Document, Ref, Value};
use base64::Engine;
use std::io::BufRead;
use std::path::Path;

/// One corpus case.
///
/// ```
/// use sereal::conformance::{check, Case, Outcome};
/// // Perl's encoding of [1, "a"] with the default options
/// let perl = b"=\xF3rl\x05\x00\x42\x01\x61a".to_vec();
/// let case = Case {
///     id: 1,
///     name: "an array".into(),
///     profile: "default".into(),
///     options: Default::default(),
///     srl: Some(perl.clone()),
///     canon: Some(perl),
/// };
/// assert_eq!(check(&case), Outcome::Passed);
/// ```
#[derive(Clone, Debug)]
pub struct Case {
    /// Case number, the same in every profile.
    pub id: u64,
    /// The test set's name for the case.
    pub name: String,
    /// The option profile.
    pub profile: String,
    /// Perl's encoder options, by Perl's names.
    pub options: serde_json::Map<String, serde_json::Value>,
    /// Perl's encoding of the case.
    pub srl: Option<Vec<u8>>,
    /// Perl's re-encoding of its decoding of `srl`.
    pub canon: Option<Vec<u8>>,
}

/// The outcome of one case.
///
/// ```
/// use sereal::conformance::{check, Case, Outcome};
/// // a canon whose inner array Perl wrote as REFN ARRAY: re-encoded, it is
/// // ARRAYREF_1, so the bytes differ at offset 6
/// let canon = b"=\xF3rl\x05\x00\x28\x2b\x01\x01".to_vec();
/// let case = Case {
///     id: 2,
///     name: "long form".into(),
///     profile: "default".into(),
///     options: Default::default(),
///     srl: None,
///     canon: Some(canon),
/// };
/// assert_eq!(check(&case), Outcome::Failed("re-encoding differs from Perl's".into(), Some(6)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every check held.
    Passed,
    /// A check failed: what, and the first differing byte offset if any.
    Failed(String, Option<usize>),
}

/// Builds encoder options from Perl option names and values, as in the
/// corpus's `options` field. `sort_keys` takes Perl's 0 to 3; the legacy
/// spellings `use_protocol_v1`, `snappy`, `snappy_incr` and
/// `snappy_threshold` mean what they mean to Perl 5.003 (each only where
/// its current form, `protocol_version`, `compress` or
/// `compress_threshold`, is absent): `snappy` with protocol 1 is protocol
/// 1's non-incremental Snappy framing ([`EncoderOptions::legacy_snappy`]).
///
/// ```
/// let opts = serde_json::json!({"protocol_version": 3, "sort_keys": 1});
/// let o = sereal::conformance::encoder_options(opts.as_object().unwrap()).unwrap();
/// assert_eq!((o.protocol_version, o.sort_keys), (3, true));
///
/// let legacy = serde_json::json!({"use_protocol_v1": 1, "snappy_incr": 1, "snappy_threshold": 10});
/// let o = sereal::conformance::encoder_options(legacy.as_object().unwrap()).unwrap();
/// assert_eq!((o.protocol_version, o.compress, o.compress_threshold), (1, sereal::Compression::Snappy, 10));
/// ```
pub fn encoder_options(
    perl: &serde_json::Map<String, serde_json::Value>,
) -> Result<EncoderOptions> {
    let mut o = EncoderOptions::new();
    let number = |name: &str| perl.get(name).map(perl_number);
    // Perl's legacy spellings, resolved as Perl resolves them: they count
    // only where the current option is absent.
    let legacy = [
        "use_protocol_v1",
        "snappy",
        "snappy_incr",
        "snappy_threshold",
    ];
    if number("protocol_version").is_none() && number("use_protocol_v1").unwrap_or(0) != 0 {
        o.protocol_version = 1;
    }
    if number("compress").is_none() {
        let incr = number("snappy_incr").unwrap_or(0) != 0;
        let plain = number("snappy").unwrap_or(0) != 0;
        let version = number("protocol_version")
            .map_or(o.protocol_version, |n| u8::try_from(n).unwrap_or(u8::MAX));
        o.legacy_snappy = !incr && plain && version == 1;
        if incr || plain {
            o.compress = Compression::Snappy;
        }
    }
    for (name, v) in perl
        .iter()
        .filter(|(name, _)| !legacy.contains(&name.as_str()))
    {
        let n = perl_number(v);
        let on = n != 0;
        let bad = || Error::new(ErrorKind::BadOption(format!("{name} => {v}")));
        match name.as_str() {
            "protocol_version" => o.protocol_version = u8::try_from(n).map_err(|_| bad())?,
            "sort_keys" => o = o.sort_keys_level(u64::try_from(n).map_err(|_| bad())?),
            "canonical" => o = o.canonical(on),
            "canonical_refs" => o.canonical_refs = on,
            "dedupe_strings" => o.dedupe_strings = on,
            "aliased_dedupe_strings" => o.aliased_dedupe_strings = on,
            "no_shared_hashkeys" => o.no_shared_hashkeys = on,
            "croak_on_bless" => o.croak_on_bless = on,
            "no_bless_objects" => o.no_bless_objects = on,
            "use_standard_double" => o.use_standard_double = on,
            "freeze_callbacks" => o.freeze_callbacks = on,
            "max_recursion_depth" => {
                o.max_recursion_depth = usize::try_from(n).map_err(|_| bad())?
            }
            "compress_threshold" => o.compress_threshold = usize::try_from(n).map_err(|_| bad())?,
            "compress_level" => o.compress_level = Some(i32::try_from(n).map_err(|_| bad())?),
            "compress" => {
                o.compress = match n {
                    0 => Compression::None,
                    1 => Compression::Snappy,
                    2 => Compression::Zlib,
                    3 => Compression::Zstd,
                    _ => return Err(bad()),
                }
            }
            _ => {
                return Err(Error::new(ErrorKind::BadOption(format!(
                    "unsupported option {name}"
                ))))
            }
        }
    }
    // Perl's snappy_threshold stands in for compress_threshold with any
    // Snappy compression, however it was asked for.
    if o.compress == Compression::Snappy && number("compress_threshold").is_none() {
        if let Some(t) = number("snappy_threshold") {
            o.compress_threshold = usize::try_from(t).map_err(|_| {
                Error::new(ErrorKind::BadOption(format!("snappy_threshold => {t}")))
            })?;
        }
    }
    Ok(o)
}

/// Reads every case of a corpus file (`.jsonl.zst`, or plain `.jsonl`).
///
/// ```
/// use sereal::conformance::{read_cases, Report};
/// # fn main() -> std::io::Result<()> {
/// let path = std::env::temp_dir().join(format!("sereal-cases-{}.jsonl", std::process::id()));
/// let line = r#"{"id": 7, "name": "an array", "profile": "v5", "options": {"protocol_version": 5},
///               "srl": "PfNybAUAQgFhYQ==", "canon": "PfNybAUAQgFhYQ=="}"#;
/// std::fs::write(&path, line.replace('\n', "") + "\n")?;
/// let cases = read_cases(&path)?;
/// std::fs::remove_file(&path)?;
/// assert_eq!((cases[0].id, cases[0].name.as_str()), (7, "an array"));
/// assert_eq!(cases[0].srl.as_deref(), Some(&b"=\xF3rl\x05\x00\x42\x01\x61a"[..]));
/// let mut report = Report::default();
/// report.add(&cases);
/// assert_eq!(report.summary(), "1 passed, 0 failed");
/// # Ok(())
/// # }
/// ```
pub fn read_cases(path: &Path) -> std::io::Result<Vec<Case>> {
    let file = std::fs::File::open(path)?;
    let reader: Box<dyn BufRead> = if path.extension().is_some_and(|e| e == "zst") {
        Box::new(std::io::BufReader::new(zstd::stream::read::Decoder::new(
            file,
        )?))
    } else {
        Box::new(std::io::BufReader::new(file))
    };
    let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidData, m);
    let b64 = |v: Option<&serde_json::Value>| -> std::io::Result<Option<Vec<u8>>> {
        match v.and_then(|v| v.as_str()) {
            None => Ok(None),
            Some(s) => base64::engine::general_purpose::STANDARD
                .decode(s)
                .map(Some)
                .map_err(|e| invalid(format!("bad base64: {e}"))),
        }
    };
    let mut cases = Vec::new();
    for (n, line) in reader.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let rec: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| invalid(format!("line {}: {e}", n + 1)))?;
        let text = |k: &str| {
            rec.get(k)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        cases.push(Case {
            id: rec.get("id").and_then(|v| v.as_u64()).unwrap_or(n as u64),
            name: text("name"),
            profile: text("profile"),
            options: rec
                .get("options")
                .and_then(|v| v.as_object())
                .cloned()
                .unwrap_or_default(),
            srl: b64(rec.get("srl"))?,
            canon: b64(rec.get("canon"))?,
        });
    }
    Ok(cases)
}

/// An option's value as Perl's `SvIV` sees it (booleans as 0 and 1,
/// anything else as 0).
fn perl_number(v: &serde_json::Value) -> i64 {
    v.as_i64()
        .or_else(|| v.as_bool().map(i64::from))
        .unwrap_or(0)
}

/// The header bytes and the (decompressed) body of a document.
fn split(doc: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    let h = Header::parse(doc)?;
    let (body, _) = Decoder::default().body_bytes(doc, &h)?;
    let mut head = doc[..h.len].to_vec();
    // The type bits say whether the body was compressed, which the body
    // comparison covers; keep the version.
    head[4] &= 0x0f;
    Ok((head, body.into_owned()))
}

fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()))
}

/// Registers the corpus's handlers for class `Frozen` on an encoder and a
/// decoder: FREEZE returns `(v, "extra")`, THAW makes `bless {v => $data[0]}`.
///
/// ```
/// use sereal::conformance::frozen_handlers;
/// use sereal::{Decoder, Encoder, EncoderOptions, Ref, Value};
/// # fn main() -> Result<(), sereal::Error> {
/// let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true))?;
/// let mut dec = Decoder::default();
/// frozen_handlers(&mut enc, &mut dec);
/// let obj = Value::from(Ref::hash([("v", 5)].into()).blessed("Frozen"));
/// let doc = enc.encode(&obj)?;
/// assert_eq!(doc[6], 0x32); // OBJECT_FREEZE
/// assert_eq!(dec.decode(&doc)?, obj); // THAW made it again
/// # Ok(())
/// # }
/// ```
pub fn frozen_handlers(enc: &mut Encoder, dec: &mut Decoder) {
    enc.on_freeze("Frozen", |obj| {
        let v = obj
            .as_hash()
            .and_then(|h| h.get("v").cloned())
            .unwrap_or_default();
        Ok(vec![v, Value::from("extra")])
    });
    dec.on_thaw("Frozen", |class, vals| {
        // `{v => $data[0]}` stores a copy of the scalar: an aliased cell
        // (`ALIAS` in the document) gives its value, not itself.
        let v = match vals.into_iter().next().unwrap_or_default() {
            Value::Alias(cell) => match &*cell.body() {
                Body::Scalar(v) => v.clone(),
                _ => Value::Alias(cell.clone()),
            },
            v => v,
        };
        Ok(Value::Ref(
            Ref::hash([("v", v)].into_iter().collect()).blessed(class),
        ))
    });
}

/// User header data compared as Perl sees it ([`Value::perl_eq`]).
fn same_header(a: &Option<Document>, b: &Option<Document>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.perl_eq(b),
        (a, b) => a.is_none() && b.is_none(),
    }
}

/// Runs the checks of one case.
///
/// ```
/// use sereal::conformance::{check, Case, Outcome};
/// use serde_json::json;
/// let perl = b"=\xF3rl\x05\x00\x42\x01\x61a".to_vec();
/// let case = |options: serde_json::Value| Case {
///     id: 1,
///     name: "an array".into(),
///     profile: "p".into(),
///     options: options.as_object().unwrap().clone(),
///     srl: Some(perl.clone()),
///     canon: Some(perl.clone()),
/// };
/// assert_eq!(check(&case(json!({}))), Outcome::Passed);
/// // re-encoded as protocol 3, the bytes differ from Perl's at the version byte
/// let Outcome::Failed(what, at) = check(&case(json!({"protocol_version": 3}))) else { panic!() };
/// assert_eq!((what.as_str(), at), ("re-encoding differs from Perl's", Some(4)));
/// ```
pub fn check(case: &Case) -> Outcome {
    let opts = match encoder_options(&case.options) {
        Ok(o) => o,
        Err(e) => return Outcome::Failed(format!("options: {e}"), None),
    };
    let mut enc = match Encoder::new(opts.clone()) {
        Ok(e) => e,
        Err(e) => return Outcome::Failed(format!("options: {e}"), None),
    };
    let mut dec = Decoder::default();
    frozen_handlers(&mut enc, &mut dec);
    let Some(canon) = &case.canon else {
        return match case.srl.as_deref().map(|s| dec.decode(s)) {
            Some(Err(e)) => Outcome::Failed(format!("srl does not decode: {e}"), e.offset()),
            _ => Outcome::Passed,
        };
    };
    let (canon_header, canon_value) = match dec.decode_with_header(canon) {
        Ok(hv) => hv,
        Err(e) => return Outcome::Failed(format!("canon does not decode: {e}"), e.offset()),
    };
    let encoded = match &canon_header {
        Some(h) => enc.encode_with_header(&canon_value, h),
        None => enc.encode(&canon_value),
    };
    let ours = match encoded {
        Ok(b) => b,
        Err(e) => return Outcome::Failed(format!("re-encoding failed: {e}"), None),
    };
    if opts.compress == Compression::None {
        if &ours != canon {
            let at = first_difference(&ours, canon);
            return Outcome::Failed("re-encoding differs from Perl's".into(), Some(at));
        }
    } else {
        match (split(&ours), split(canon)) {
            (Ok((ha, ba)), Ok((hb, bb))) => {
                if ha != hb {
                    return Outcome::Failed(
                        "header differs from Perl's".into(),
                        Some(first_difference(&ha, &hb)),
                    );
                }
                if ba != bb {
                    let at = first_difference(&ba, &bb);
                    return Outcome::Failed(
                        "decompressed body differs from Perl's".into(),
                        Some(at),
                    );
                }
            }
            (Err(e), _) | (_, Err(e)) => {
                return Outcome::Failed(format!("decompression: {e}"), None)
            }
        }
    }
    if let Some(srl) = &case.srl {
        // Perl 5.003's decoder built the graph canon was written from.
        let mut perls = Decoder::new(DecoderOptions::new().thaw_order(ThawOrder::Perl5003));
        frozen_handlers(&mut enc, &mut perls);
        match perls.decode_with_header(srl) {
            Err(e) => return Outcome::Failed(format!("srl does not decode: {e}"), e.offset()),
            Ok((_, v)) if !v.perl_eq(&canon_value) => {
                return Outcome::Failed("srl and canon decode to different graphs".into(), None)
            }
            Ok((h, _)) if !same_header(&h, &canon_header) => {
                return Outcome::Failed(
                    "srl and canon decode to different user header data".into(),
                    None,
                )
            }
            Ok(_) => {}
        }
    }
    Outcome::Passed
}

/// Totals over one or more corpus files.
///
/// ```
/// use sereal::conformance::{Case, Report};
/// let case = |id, canon: &[u8]| Case {
///     id,
///     name: format!("case {id}"),
///     profile: "p".into(),
///     options: Default::default(),
///     srl: None,
///     canon: Some(canon.to_vec()),
/// };
/// let mut report = Report::default();
/// report.add(&[case(1, b"=\xF3rl\x05\x00\x01"), case(2, b"=\xF3rl\x05\x00\x28\x2b\x01\x01")]);
/// assert_eq!(report.passed, 1);
/// let (id, _, _, what, at) = &report.failed[0];
/// assert_eq!((*id, what.as_str(), *at), (2, "re-encoding differs from Perl's", Some(6)));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Cases whose checks all held.
    pub passed: usize,
    /// Failed cases: `(id, name, profile, what, first differing offset)`.
    pub failed: Vec<(u64, String, String, String, Option<usize>)>,
}

impl Report {
    /// Checks every case of `cases` and adds the outcomes.
    ///
    /// ```
    /// use sereal::conformance::{Case, Report};
    /// let one = Case {
    ///     id: 1,
    ///     name: "one".into(),
    ///     profile: "p".into(),
    ///     options: Default::default(),
    ///     srl: Some(b"=\xF3rl\x05\x00\x01".to_vec()),
    ///     canon: Some(b"=\xF3rl\x05\x00\x01".to_vec()),
    /// };
    /// let mut report = Report::default();
    /// report.add(&[one.clone()]); // one corpus file
    /// report.add(&[one]); // and another: the totals add up
    /// assert_eq!((report.passed, report.failed.len()), (2, 0));
    /// ```
    pub fn add(&mut self, cases: &[Case]) {
        for c in cases {
            match check(c) {
                Outcome::Passed => self.passed += 1,
                Outcome::Failed(what, at) => {
                    self.failed
                        .push((c.id, c.name.clone(), c.profile.clone(), what, at))
                }
            }
        }
    }

    /// The closing line: `N passed, M failed`.
    ///
    /// ```
    /// use sereal::conformance::Report;
    /// let report = Report { passed: 41, failed: vec![(9, "n".into(), "p".into(), "what".into(), None)] };
    /// assert_eq!(report.summary(), "41 passed, 1 failed");
    /// ```
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failed.len())
    }
}
