//! `sereal show`: Perl's notation, checked against Data::Dumper itself.

mod common;

use common::{run, text, TempDir};
use sereal::{Ref, Value};
use std::process::Command;

fn have_perl() -> bool {
    let ok = Command::new("perl")
        .args([
            "-MSereal::Encoder",
            "-MSereal::Decoder",
            "-MData::Dumper",
            "-e1",
        ])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("NOTICE: perl with Sereal::Encoder, Sereal::Decoder and Data::Dumper not found; skipping");
    }
    ok
}

/// Shared, cyclic and blessed data, scalar references, regexps and
/// numbers: `show` prints what Data::Dumper prints (`Indent = 1`,
/// `Sortkeys = 1`), byte for byte.
#[test]
fn show_matches_data_dumper() {
    if !have_perl() {
        return;
    }
    let dir = TempDir::new("show");
    let srl = dir.0.join("data.srl");
    let script = r#"
        use Sereal::Encoder qw(encode_sereal); use Data::Dumper;
        $Data::Dumper::Indent = 1; $Data::Dumper::Sortkeys = 1;
        my $g = {name => "admins"};
        my $x = 5;
        my $cyc = {}; $cyc->{self} = $cyc;
        my $data = [
            bless({id => 1, group => $g, name => "O'Brien", tags => ["a", "b"],
                   score => 1.5, big => 18446744073709551615, n => 1234567890, m => -1234567890,
                   neg => -3, s => "12", u => undef, 'a b' => 'back\\slash'}, "My::User"),
            $g, $cyc, \$x, \$x, qr/a\/b+/i, qr{x/y}, bless([], "Empty"), {}, [],
            \"str", \\"x", {"a b" => 1, "12" => 2}, bless(\(my $o = 7), "Boxed"),
            0.1, 1e20, 1/3, -2.5, [[[[1]]]],
        ];
        open my $f, ">", $ARGV[0] or die; binmode $f; print $f encode_sereal($data); close $f;
        print Dumper($data);
    "#;
    let perl = Command::new("perl")
        .args(["-e", script, srl.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        perl.status.success(),
        "{}",
        String::from_utf8_lossy(&perl.stderr)
    );
    let (code, out, err) = run(&["show", srl.to_str().unwrap()], b"");
    assert_eq!(code, 0, "{err}");
    assert_eq!(text(&out), text(&perl.stdout));
}

/// What Perl's notation cannot say is a comment: weak references, UTF-8
/// strings of ASCII text, aliases; a byte string escapes its high
/// characters and a UTF-8 string writes them; booleans are `!!1`/`!!0`.
#[test]
fn show_marks_weak_references_string_kinds_and_booleans() {
    let parent = Ref::hash(Default::default());
    let child = Value::hash([("parent", Value::weak(&parent))]);
    parent
        .hash_mut()
        .unwrap()
        .insert("kids", Value::array([child]));
    let cell = Ref::scalar(7);
    let v = Value::array([
        Value::from(&parent),
        Value::bytes(b"caf\xe9"),
        Value::utf8("Zoë"),
        Value::utf8("ascii"),
        Value::bytes(b"tab\there"),
        Value::Bool(true),
        Value::Bool(false),
        Value::Alias(cell.clone()),
        Value::Alias(cell.clone()),
        Value::from(&cell),
    ]);
    drop(cell);
    let doc = sereal::encode(&v).unwrap();
    parent.hash_mut().unwrap().clear(); // break the cycle
    let (code, out, err) = run(&["show"], &doc);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        text(&out),
        r#"$VAR1 = [
  {
    'kids' => [
      {
        'parent' => $VAR1->[0] # weak
      }
    ]
  },
  "caf\x{e9}",
  "Zoë",
  'ascii', # utf8
  "tab\there",
  !!1,
  !!0,
  7, # alias
  $VAR1->[7], # alias
  \$VAR1->[7]
];
"#
    );
}

#[test]
fn show_numbers_each_document_and_shows_the_user_header() {
    let mut s = sereal::encode(&Value::from(1)).unwrap();
    let mut enc = sereal::Encoder::new(Default::default()).unwrap();
    s.extend(
        enc.encode_with_header(&Value::array([2]), &Value::hash([("v", 3)]))
            .unwrap(),
    );
    let (code, out, err) = run(&["show"], &s);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        text(&out),
        "# -, document 1 at offset 0\n$VAR1 = 1;\n\
         # -, document 2 at offset 7\n$VAR2 = [\n  2\n];\n"
    );
    let (code, out, _) = run(&["show", "--header", "-"], &s[7..]);
    assert_eq!(
        (code, text(&out)),
        (0, "$VAR1 = {\n  'v' => 3\n};\n".into())
    );
    let (code, _, err) = run(&["show", "--header"], &s[..7]);
    assert_eq!(code, 1);
    assert_eq!(err, "error: the document has no user header data\n");
}
