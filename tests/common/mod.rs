//! What several test files share: the Perl 5.003 corpus's profiles and
//! files, and running Perl. (Each test file uses part of it.)

use std::path::PathBuf;

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

/// What `perl` run with `args` and the environment `env` prints, with
/// Perl's hash order fixed; fails the test if Perl fails.
#[allow(dead_code)]
pub fn perl<A: AsRef<std::ffi::OsStr>>(args: &[A], env: &[(&str, &str)]) -> Vec<u8> {
    let out = std::process::Command::new("perl")
        .args(args)
        .envs(env.iter().copied())
        .env("PERL_HASH_SEED", "0")
        .env("PERL_PERTURB_KEYS", "0")
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
