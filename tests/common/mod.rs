//! What several test files share: the Perl 5.003 corpus's profiles and
//! files, and running Perl. (Each test file uses part of it.)

use std::path::PathBuf;

#[allow(dead_code)]
pub mod graphs;
#[allow(dead_code)]
pub mod streams;

/// The 14 option profiles of the corpus (tests/corpus/README.md).
#[allow(dead_code)]
pub const PROFILES: [&str; 14] = [
    "v1",
    "v2",
    "v3",
    "v4",
    "v5",
    "v5_sort_keys",
    "v5_canonical",
    "v5_dedupe",
    "v5_aliased_dedupe",
    "v5_no_shared_hashkeys",
    "v5_snappy",
    "v5_zlib",
    "v5_zstd",
    "v5_freeze",
];

/// The corpus file of `profile`.
#[allow(dead_code)]
pub fn corpus(profile: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus/perl-sereal-5.003")
        .join(format!("{profile}.jsonl.zst"))
}

/// Whether Perl's Sereal (encoder and decoder) is installed; prints a
/// notice naming `what` is skipped when it is not.
#[allow(dead_code)]
pub fn perl_sereal(what: &str) -> bool {
    let ok = std::process::Command::new("perl")
        .args(["-MSereal::Encoder", "-MSereal::Decoder", "-e", "1"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIP {what}: Perl's Sereal is not installed (apt-get install libsereal-perl)");
    }
    ok
}

/// What the Perl program `script` prints (run from a file, so it may be
/// long), with Perl's hash order fixed; fails the test if Perl fails.
#[allow(dead_code)]
pub fn perl_output(script: &str) -> Vec<u8> {
    let path = std::env::temp_dir().join(format!(
        "sereal-test-{}-{:?}.pl",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&path, script).expect("write the Perl script");
    let out = perl(&[path.as_os_str()], &[]);
    let _ = std::fs::remove_file(&path);
    out
}

/// `perl` with `args`, Perl's hash order fixed, to be run.
#[allow(dead_code)]
pub fn perl_command<A: AsRef<std::ffi::OsStr>>(args: &[A]) -> std::process::Command {
    let mut command = std::process::Command::new("perl");
    command
        .args(args)
        .env("PERL_HASH_SEED", "0")
        .env("PERL_PERTURB_KEYS", "0");
    command
}

/// What `perl` run with `args` and the environment `env` prints, with
/// Perl's hash order fixed; fails the test if Perl fails.
#[allow(dead_code)]
pub fn perl<A: AsRef<std::ffi::OsStr>>(args: &[A], env: &[(&str, &str)]) -> Vec<u8> {
    let out = perl_command(args)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run perl");
    assert!(
        out.status.success(),
        "perl {:?} failed: {}",
        args.iter().map(|a| a.as_ref()).collect::<Vec<_>>(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The bytes a hex string spells.
#[allow(dead_code)]
pub fn unhex(h: &str) -> Vec<u8> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex digits"))
        .collect()
}

/// The lines of hex the Perl program `script` prints, as bytes (see
/// [`perl_output`]).
#[allow(dead_code)]
pub fn perl_hex_lines(script: &str) -> Vec<Vec<u8>> {
    String::from_utf8(perl_output(script))
        .expect("Perl prints hex")
        .lines()
        .map(unhex)
        .collect()
}

/// A Perl prelude for the depth oracles: `@data`, a broad set of
/// structures (scalars, references to references, nested and empty
/// containers, undef and immortals as elements, shared and aliased
/// strings, objects of every kind, regexps, FREEZE objects, weak
/// references and self-references, deep chains), and `@again`, structures
/// whose shared containers are met again deeper than where they are
/// written first.
#[allow(dead_code)]
pub const PERL_STRUCTURES: &str = r#"
    use strict; use warnings;
    use Sereal::Encoder; use Sereal::Decoder; use Scalar::Util qw(weaken);
    package Frozen {
        sub FREEZE { return ($_[0]{v}, [[7]], undef) }
        sub THAW { my ($class, $serializer, @v) = @_; return bless { v => $v[0] }, $class }
    }
    package main;
    my @data;
    my $o = bless { a => 1 }, 'Foo';
    my $i = 3; my $u; my $s = "strings";
    my $shared = [1, 2];
    push @data,
        1, "x", undef, \1, \\1, \\\"x", \undef, \$u, \!!1, \!!0, [\!!1, \!!0, \undef, \$u],
        [], {}, [[]], [[[1]]], { a => { b => { c => [1] } } }, \[1], \{ a => 1 }, \\[[2]],
        [undef], { a => undef }, [[undef]], [1, [undef, [undef]]], { a => [undef, \undef] },
        [undef, undef, \undef], [\$i, \$i, \\$i], [$shared, $shared],
        [$s, $s, "strings", "strings", { str => "strings" }, { str => "strings" }, [[["strings"]]]],
        $o, [$o], { k => $o }, [$o, bless([1, 2], 'Bar'), bless(\(my $x = 3), 'Baz'), bless(\[1], 'Qux')],
        [$o, bless({}, 'Foo'), bless([], 'Foo'), bless({ in => bless({}, 'In') }, 'Out')],
        [qr/x/i, bless(qr/y/, 'R'), [qr/z/]],
        [bless({ v => 'a' }, 'Frozen'), [bless({ v => [1, [2]] }, 'Frozen')]];
    { my $a = [$o, $o]; weaken($a->[0]); my $b = [$o, $o]; weaken($b->[1]); push @data, $a, $b; }
    { my $h = {}; $h->{self} = $h; weaken($h->{self}); push @data, $h; }
    { my $h = bless {}, 'S'; $h->{self} = $h; weaken($h->{self}); push @data, [$h]; }
    { my $r = \$i; my $a = [$r, $r]; weaken($a->[0]); push @data, $a; }
    { my $deep = [1]; $deep = ($_ % 2 ? [$deep] : { k => $deep }) for 1 .. 25; push @data, $deep; }
    { my $deep = \1; for (1 .. 20) { my $n = $deep; $deep = \$n } push @data, [$deep]; }
    { my $deep = [1]; for (1 .. 5) { my $n = $deep; $deep = [\\$n, { k => \$n }] } push @data, $deep; }
    my @again = ([$shared, $shared, { x => $shared }], [$shared, [$shared]], [{ a => [1] }, \$shared]);
    { my $in = bless {}, 'In'; my $out = bless { in => $in }, 'Out'; push @again, [$out, [$out]];
      my $a = [$out, [$out]]; weaken($a->[0]); push @again, $a;
      my $h = { a => [[$o]], b => $o }; weaken($h->{a}[0][0]); push @again, $h; }
    { my @sparse; $sparse[3] = 1; push @again, [\@sparse, [\@sparse]]; }
"#;

/// A small deterministic generator (xorshift) for the random tests.
#[allow(dead_code)]
pub struct Rng(pub u64);

#[allow(dead_code)]
impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Bytes as a serde target that asks for bytes (and takes text as its
/// bytes).
#[allow(dead_code)]
#[derive(Debug, PartialEq)]
pub struct Raw(pub Vec<u8>);

impl<'de> serde::Deserialize<'de> for Raw {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Raw, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Raw;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Raw, E> {
                Ok(Raw(v.to_vec()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
                Ok(Raw(v.as_bytes().to_vec()))
            }
        }
        d.deserialize_bytes(V)
    }
}

/// Documents of every shape this crate writes, with every compression,
/// protocols 1, 3 and 5, and user header data.
#[allow(dead_code)]
pub fn shaped_documents() -> Vec<Vec<u8>> {
    use sereal::{Compression, Encoder, EncoderOptions, Ref, Value};
    let shared = Ref::array(vec![Value::from(1), Value::from(2)]);
    let cyclic = Ref::hash(Default::default());
    {
        let mut h = cyclic.hash_mut().unwrap();
        h.insert("weak", Value::Weak(cyclic.downgrade()));
        h.insert("strong", Value::Ref(cyclic.clone()));
    }
    let long = "x".repeat(100_000);
    let record = |i: i64| {
        Value::hash([
            ("id", Value::from(i)),
            ("name", Value::from(format!("name {i}"))),
            ("email", Value::utf8(format!("user{i}@example.com ✓"))),
            ("tags", Value::array(["a", "bb", "ccc"])),
            ("score", Value::Double(i as f64 / 3.0)),
            ("neg", Value::from(-1000 * i)),
        ])
    };
    let values = vec![
        Value::Undef,
        Value::from(0),
        Value::from(-5),
        Value::from(1u64 << 60),
        Value::from(i64::MIN),
        Value::Float(1.5),
        Value::Double(-2.25),
        Value::Bool(true),
        Value::True,
        Value::False,
        Value::CanonicalUndef,
        Value::from(""),
        Value::from("short"),
        Value::from(long.as_str()),
        Value::utf8("ünïcödé"),
        Value::bytes(vec![0xffu8; 40]),
        Value::array(Vec::<Value>::new()),
        Value::hash(Vec::<(&str, Value)>::new()),
        Value::array((0..40).map(Value::from).collect::<Vec<_>>()),
        Value::array([Value::array([Value::array([Value::array([1])])])]),
        Value::hash(
            (0..20)
                .map(|i| (format!("k{i}"), Value::from(i)))
                .collect::<Vec<_>>(),
        ),
        Value::array([Value::Ref(shared.clone()), Value::Ref(shared.clone())]),
        Value::Ref(cyclic.clone()),
        Value::scalar_ref(Value::scalar_ref(7)),
        Value::Ref(Ref::regexp("^a.*b$", "i")),
        Value::Ref(Ref::hash([("x", 1)].into_iter().collect()).blessed("My::Class")),
        Value::array([
            Value::Ref(Ref::array(vec![Value::from(1)]).blessed("Same")),
            Value::Ref(Ref::array(vec![Value::from(2)]).blessed("Same")),
        ]),
        Value::array((0..200).map(record).collect::<Vec<_>>()),
    ];
    let mut docs = Vec::new();
    for v in &values {
        for opts in [
            EncoderOptions::new(),
            EncoderOptions::new().protocol_version(1),
            EncoderOptions::new().protocol_version(3),
            EncoderOptions::new().dedupe_strings(true),
            EncoderOptions::new().aliased_dedupe_strings(true),
            EncoderOptions::new()
                .compress(Compression::Snappy)
                .compress_threshold(0),
            EncoderOptions::new()
                .compress(Compression::Zlib)
                .compress_threshold(0),
            EncoderOptions::new()
                .compress(Compression::Zstd)
                .compress_threshold(0),
        ] {
            let mut enc = Encoder::new(opts).unwrap();
            docs.push(enc.encode(v).unwrap());
            if enc.options().protocol_version >= 2 {
                docs.push(enc.encode_with_header(v, &record(1)).unwrap());
            }
        }
    }
    // Compressed documents are among them, not only raw ones written
    // because compression did not pay.
    let compressed = docs.iter().filter(|d| d[4] >> 4 != 0).count();
    assert!(compressed > 20, "{compressed} compressed documents");
    cyclic.hash_mut().unwrap().clear();
    docs
}
