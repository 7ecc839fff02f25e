//! Perl's scalars both ways (issue 40): what Perl writes (every DBI column
//! a string, `""`/`"1"` flags, undef for NULL) reads into typed Rust
//! fields by default, and what the serializer writes is what Perl sees as
//! it would have written it. Checked against Perl's Sereal where it is
//! installed (skipped with a notice otherwise).

mod common;

use common::{perl_hex_lines, perl_output, perl_sereal, unhex};
use serde::{Deserialize, Serialize};
use sereal::{decode, from_slice, from_slice_with, from_value, from_value_with, to_value, to_vec};
use sereal::{DecoderOptions, Value};

/// A database row as Rust wants it.
#[derive(Deserialize, Debug, PartialEq)]
struct Row {
    id: u64,
    big: u64,
    neg: i32,
    price: f64,
    ratio: f32,
    padded: f64,
    active: bool,
    deleted: bool,
    zero: bool,
    truth: bool,
    two: bool,
    name: String,
    zip: String,
    score: String,
    count: Option<u32>,
    note: Option<String>,
    maybe: Option<bool>,
}

/// The rows Perl writes, as DBI returns them: strings, flags, NULLs; and
/// a few Perl numbers read into strings.
const PERL_ROWS: &str = r#"
    use strict; use warnings; use Sereal::Encoder;
    my $enc = Sereal::Encoder->new;
    for my $i (1 .. 3) {
        my %row = (
            id => "1$i", big => "18446744073709551615", neg => "-5",
            price => "2.50", ratio => "1e3", padded => " 7 ",
            active => "1", deleted => "", zero => "0", truth => (1 == 1), two => 2,
            name => "ann", zip => 2100 + $i, score => 0.1 + 0.2,
            count => undef, note => undef, maybe => undef,
        );
        print unpack("H*", $enc->encode(\%row)), "\n";
    }
"#;

fn expected(i: u64) -> Row {
    Row {
        id: 10 + i,
        big: u64::MAX,
        neg: -5,
        price: 2.5,
        ratio: 1000.0,
        padded: 7.0,
        active: true,
        deleted: false,
        zero: false,
        truth: true,
        two: true,
        name: "ann".into(),
        zip: (2100 + i).to_string(),
        score: "0.3".into(),
        count: None,
        note: None,
        maybe: None,
    }
}

#[test]
fn perl_rows_read_into_typed_fields_by_default() {
    if !perl_sereal("perl_rows_read_into_typed_fields_by_default") {
        return;
    }
    let docs = perl_hex_lines(PERL_ROWS);
    let want: Vec<Row> = (1..=3).map(expected).collect();
    // one document at a time, from the bytes and from the graph
    for (doc, want) in docs.iter().zip(&want) {
        assert_eq!(&from_slice::<Row>(doc).unwrap(), want);
        let graph = decode(doc).unwrap();
        assert_eq!(&from_value::<Row, _>(&graph).unwrap(), want);
    }
    // a typed stream of the documents back to back
    let stream: Vec<u8> = docs.concat();
    let read: Vec<Row> = sereal::Deserializer::from_slice(&stream)
        .into_iter::<Row>()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(read, want);

    // strict_types: today's errors, on both paths
    let strict = DecoderOptions::new().strict_types(true);
    let e = from_slice_with::<Row>(&docs[0], strict.clone()).unwrap_err();
    assert!(e.to_string().contains("invalid type: string"), "{e}");
    let e = from_value_with::<Row, _>(&decode(&docs[0]).unwrap(), &strict).unwrap_err();
    assert!(e.to_string().contains("invalid type: string"), "{e}");
}

/// A string a Perl program of one scalar writes, read as `T`.
fn perl_scalar(expr: &str) -> Vec<u8> {
    let script = format!(
        "use Sereal::Encoder; print unpack('H*', Sereal::Encoder->new->encode({expr})), qq(\\n);"
    );
    perl_hex_lines(&script).remove(0)
}

#[test]
fn strings_that_are_not_integers_say_so_with_offsets() {
    if !perl_sereal("strings_that_are_not_integers_say_so_with_offsets") {
        return;
    }
    let doc = perl_scalar(r#""2.5""#);
    let e = from_slice::<u32>(&doc).unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"string "2.5" is not an integer at offset 6"#
    );
    assert_eq!(e.offset(), Some(6));
    assert_eq!(from_slice::<f32>(&doc).unwrap(), 2.5);
    let doc = perl_scalar(r#"[1, "abc"]"#);
    let e = from_slice::<Vec<u64>>(&doc).unwrap_err();
    assert_eq!(e.to_string(), r#"string "abc" is not a number at offset 8"#);
    let e = from_value::<Vec<u64>, _>(&decode(&doc).unwrap()).unwrap_err();
    assert_eq!(e.to_string(), r#"string "abc" is not a number"#);
    let e = from_slice::<u8>(&perl_scalar(r#""300""#)).unwrap_err();
    assert!(e.to_string().contains("300"), "{e}");
    assert!(e.to_string().contains("expected u8"), "{e}");
}

#[test]
fn perl_strings_into_numbers_without_perl() {
    let s = |t: &str| to_vec(&t).unwrap();
    assert_eq!(from_slice::<u64>(&s("12")).unwrap(), 12);
    assert_eq!(
        from_slice::<u64>(&s("18446744073709551615")).unwrap(),
        u64::MAX
    );
    assert_eq!(from_slice::<i32>(&s("-5")).unwrap(), -5);
    assert_eq!(from_slice::<i64>(&s(" 42\n")).unwrap(), 42);
    assert_eq!(from_slice::<f64>(&s("1e3")).unwrap(), 1000.0);
    assert_eq!(from_slice::<f64>(&s(" 7 ")).unwrap(), 7.0);
    assert!(from_slice::<f64>(&s("-Inf")).unwrap().is_infinite());
    for bad in ["", "abc", "0x10", "1_000", "12abc", "1e"] {
        let e = from_slice::<u64>(&s(bad)).unwrap_err();
        assert!(e.to_string().contains("is not a number"), "{bad:?}: {e}");
        let e = from_value::<u64, _>(&Value::from(bad)).unwrap_err();
        assert!(e.to_string().contains("is not a number"), "{bad:?}: {e}");
    }
    for frac in ["2.5", "1e-1", "2.0000000000000000001"] {
        let e = from_slice::<u32>(&s(frac)).unwrap_err();
        assert!(e.to_string().contains("is not an integer"), "{frac:?}: {e}");
    }
    // an integer written as a decimal (DBI's DECIMAL columns) is exact
    assert_eq!(from_slice::<u32>(&s("2.00")).unwrap(), 2);
    assert_eq!(from_slice::<i64>(&s("-1e3")).unwrap(), -1000);
    assert_eq!(from_value::<u64, _>(&Value::from("25.0")).unwrap(), 25);
    assert_eq!(Value::from("2.50e1").to_i64(), Some(25));
    // out of range: the visitor's error
    assert!(from_slice::<u8>(&s("300")).is_err());
    assert!(from_slice::<u32>(&s("-1")).is_err());
    assert!(from_value::<u8, _>(&Value::from("300")).is_err());
    // the graph path takes what the byte path takes
    assert_eq!(from_value::<u64, _>(&Value::utf8("12")).unwrap(), 12);
    assert_eq!(from_value::<f32, _>(&Value::from("2.50")).unwrap(), 2.5);
    // numbers and Perl's truth into strings and booleans
    assert_eq!(from_slice::<String>(&to_vec(&12u8).unwrap()).unwrap(), "12");
    assert_eq!(
        from_slice::<String>(&to_vec(&-70000i64).unwrap()).unwrap(),
        "-70000"
    );
    assert_eq!(
        from_slice::<String>(&to_vec(&0.1f64).unwrap()).unwrap(),
        "0.1"
    );
    assert_eq!(
        from_value::<String, _>(&Value::Double(1e21)).unwrap(),
        "1e+21"
    );
    assert!(from_slice::<bool>(&to_vec(&7u8).unwrap()).unwrap());
    assert!(from_value::<bool, _>(&Value::from(-3)).unwrap());
    assert!(!from_value::<bool, _>(&Value::Double(0.0)).unwrap());
    // strict_types: as before
    let strict = DecoderOptions::new().strict_types(true);
    assert!(from_slice_with::<u64>(&s("12"), strict.clone()).is_err());
    assert!(from_slice_with::<String>(&to_vec(&12u8).unwrap(), strict.clone()).is_err());
    assert!(from_slice_with::<bool>(&to_vec(&7u8).unwrap(), strict.clone()).is_err());
    assert!(from_slice_with::<bool>(&to_vec(&1u8).unwrap(), strict.clone()).unwrap());
    assert!(from_value_with::<f64, _>(&Value::from("2.5"), &strict).is_err());
}

#[test]
fn self_describing_targets_keep_strings_as_strings() {
    let doc = to_vec(&("12", 12u8, "")).unwrap();
    let json: serde_json::Value = from_slice(&doc).unwrap();
    assert_eq!(json, serde_json::json!(["12", 12, ""]));
    let v: Value = from_slice(&doc).unwrap();
    assert_eq!(v.at(0), Some(Value::from("12")));
    let json: serde_json::Value = from_value(&decode(&doc).unwrap()).unwrap();
    assert_eq!(json, serde_json::json!(["12", 12, ""]));
}

#[test]
fn numbers_into_strings_as_perl_prints_them() {
    if !perl_sereal("numbers_into_strings_as_perl_prints_them") {
        return;
    }
    // Perl writes each number and prints it: we read the same text.
    let out = perl_output(
        r#"
        use Sereal::Encoder; my $e = Sereal::Encoder->new;
        for my $v (0.1 + 0.2, 1e21, 3.0, 1/3, 1e15, 1e14, -2.5, 1e-5, 0.0001, 2**0.5,
                   123456789012345678, -7, 18446744073709551615, -9223372036854775808,
                   9**9**9, -9**9**9, 1.5e300, 100, 0.5, 6.02214076e23) {
            print unpack("H*", $e->encode($v)), "\t$v\n";
        }
    "#,
    );
    for line in String::from_utf8(out).unwrap().lines() {
        let (hex, text) = line.split_once('\t').unwrap();
        let doc = unhex(hex);
        assert_eq!(from_slice::<String>(&doc).unwrap(), text, "{hex}");
        let v = decode(&doc).unwrap();
        assert_eq!(from_value::<String, _>(&v).unwrap(), text, "{hex}");
        assert_eq!(v.to_perl_string().as_deref(), Some(text), "{hex}");
    }
}

#[test]
fn value_accessors_convert_as_perl() {
    assert_eq!(Value::from("12").to_u64(), Some(12));
    assert_eq!(Value::from("12").as_u64(), None);
    assert_eq!(Value::from(" -5 ").to_i64(), Some(-5));
    assert_eq!(Value::from("2.5").to_i64(), None);
    assert_eq!(Value::from("2.5").to_f64(), Some(2.5));
    assert_eq!(Value::from("abc").to_f64(), None);
    assert_eq!(Value::Double(4.0).to_u64(), Some(4));
    assert_eq!(Value::from(-1).to_u64(), None);
    assert_eq!(Value::from("").to_bool(), Some(false));
    assert_eq!(Value::from("0").to_bool(), Some(false));
    assert_eq!(Value::from("00").to_bool(), Some(true));
    assert_eq!(Value::from(0).to_bool(), Some(false));
    assert_eq!(Value::False.to_bool(), Some(false));
    assert_eq!(Value::Undef.to_bool(), None);
    assert_eq!(Value::Undef.to_i64(), None);
    assert_eq!(Value::Bool(false).to_perl_string().as_deref(), Some(""));
}

/// A byte slice serialized as bytes (what `serde_bytes` does).
struct Raw(&'static [u8]);

impl Serialize for Raw {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

/// Rust scalars, each serialized three ways, and what Perl sees of them.
#[test]
fn what_the_serializer_writes_is_what_perl_sees() {
    // to_vec, to_value and a graph give the same bytes; Perl's view
    fn row<T: Serialize>(v: T, graph: Value, view: &str) -> (Vec<u8>, String) {
        let bytes = to_vec(&v).unwrap();
        assert_eq!(
            sereal::encode(&to_value(&v).unwrap()).unwrap(),
            bytes,
            "{view}"
        );
        assert_eq!(sereal::encode(&graph).unwrap(), bytes, "{view}");
        (bytes, view.to_string())
    }
    let rows = [
        row("abc".to_string(), Value::from("abc"), "def str 0 abc"),
        row("abc", Value::from("abc".to_string()), "def str 0 abc"),
        row("café", Value::from("café"), "def str 1 café"),
        row('x', Value::from("x"), "def str 0 x"),
        row('é', Value::from("é"), "def str 1 é"),
        row(Raw(b"ab"), Value::from(&b"ab"[..]), "def str 0 ab"),
        row(12u8, Value::from(12u8), "def int 0 12"),
        row(-5i64, Value::from(-5i64), "def int 0 -5"),
        row(300u32, Value::from(300u32), "def int 0 300"),
        row(
            u64::MAX,
            Value::from(u64::MAX),
            "def int 0 18446744073709551615",
        ),
        row(2.5f64, Value::from(2.5f64), "def num 0 2.5"),
        row(0.1f64, Value::from(0.1f64), "def num 0 0.1"),
        row(2.5f32, Value::from(2.5f32), "def num 0 2.5"),
        row(true, Value::from(true), "def bool 0 1"),
        row(false, Value::from(false), "def bool 0 "),
        row(None::<u8>, Value::from(None::<u8>), "undef"),
        row((), Value::Undef, "undef"),
        row(Some("x"), Value::from(Some("x")), "def str 0 x"),
    ];
    if !perl_sereal("what_the_serializer_writes_is_what_perl_sees") {
        return;
    }
    let mut script = String::from(
        r#"
        use strict; use warnings; use Sereal::Decoder; use B;
        binmode STDOUT, ':utf8';
        my $d = Sereal::Decoder->new;
        while (my $hex = <DATA>) {
            chomp $hex;
            my $v = $d->decode(pack 'H*', $hex);
            if (!defined $v) { print "undef\n"; next }
            my $f = B::svref_2object(\$v)->FLAGS;
            my $kind = ref(\$v) ne 'SCALAR' ? ref(\$v)
                : ($f & B::SVf_POK) && ($f & B::SVf_IOK) ? 'bool'
                : ($f & B::SVf_POK) ? 'str' : ($f & B::SVf_IOK) ? 'int'
                : ($f & B::SVf_NOK) ? 'num' : '?';
            printf "def %s %d %s\n", $kind, utf8::is_utf8($v) ? 1 : 0, $v;
        }
        __DATA__
"#,
    );
    for (bytes, _) in &rows {
        script.extend(bytes.iter().map(|b| format!("{b:02x}")));
        script.push('\n');
    }
    let seen = String::from_utf8(perl_output(&script)).unwrap();
    let want: Vec<&str> = rows.iter().map(|(_, view)| view.as_str()).collect();
    assert_eq!(seen.lines().collect::<Vec<_>>(), want);
}
