//! The decoder's size limits at their boundaries, against Perl 5.003's
//! decoder: for each document Perl writes (arrays and hashes around the
//! short-form boundary of 16, byte and UTF-8 strings, long keys and class
//! names, regexps, nested containers; raw, zlib and zstd bodies), Perl
//! prints the smallest `max_num_array_entries`, `max_num_hash_entries`,
//! `max_string_length` and `max_uncompressed_size` it decodes the document
//! under, and the decoder must accept from exactly that value and refuse
//! below it.

use sereal::{Decoder, DecoderOptions};
mod common;

const PERL: &str = r#"
    use Sereal::Encoder; use Sereal::Decoder;
    my @data = (
        [1 .. 5], [1 .. 16], { map { $_ => 1 } 1 .. 5 }, { map { $_ => 1 } 1 .. 16 },
        "x" x 5, "x" x 40, "\x{263a}" x 5, { "k" x 40 => 1 }, [[1 .. 3], [1 .. 5]],
        bless([1], "C" x 10), qr/a{5}/, [], ["abc" x 50, [("abcd") x 20]],
        [bless({ a => 1 }, "Foo"), bless({ b => 2 }, "Foo")],
    );
    my @options = qw(max_num_array_entries max_num_hash_entries max_string_length max_uncompressed_size);
    for my $v (@data) {
        for my $p ({}, { compress => Sereal::Encoder::SRL_ZLIB(), compress_threshold => 1 },
                   { compress => Sereal::Encoder::SRL_ZSTD(), compress_threshold => 1 }) {
            my $doc = Sereal::Encoder->new($p)->encode($v);
            my @min;
            for my $opt (@options) {
                my ($min) = grep { eval { Sereal::Decoder->new({ $opt => $_ })->decode($doc); 1 } } 1 .. 300;
                push @min, $min // 0;
            }
            print join(" ", unpack("H*", $doc), @min), "\n";
        }
    }
"#;

fn options(which: usize, limit: usize) -> DecoderOptions {
    let o = DecoderOptions::new();
    match which {
        0 => o.max_num_array_entries(limit),
        1 => o.max_num_hash_entries(limit),
        2 => o.max_string_length(limit),
        _ => o.max_uncompressed_size(limit),
    }
}

#[test]
fn limits_hold_where_perls_do() {
    if !common::perl_sereal("the size-limit oracle") {
        return;
    }
    let out = String::from_utf8(common::perl_output(PERL)).expect("Perl prints text");
    let mut checked = 0;
    for line in out.lines() {
        let mut f = line.split(' ');
        let doc = common::unhex(f.next().expect("hex"));
        for (which, perl) in f.enumerate() {
            let perl: usize = perl.parse().expect("a number");
            assert!(perl > 0, "Perl refuses {line} under every limit {which}");
            let ours = (1..=300).find(|&l| Decoder::new(options(which, l)).decode(&doc).is_ok());
            assert_eq!(ours, Some(perl), "{line}: limit {which}");
            let e = Decoder::new(options(which, perl - 1)).decode(&doc);
            if perl > 1 {
                assert!(
                    matches!(
                        e.as_ref().map_err(|e| e.kind()),
                        Err(sereal::ErrorKind::LimitExceeded(_))
                    ),
                    "{line}: limit {which} at {}: {e:?}",
                    perl - 1
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 14 * 3 * 4, "limits checked");
}
