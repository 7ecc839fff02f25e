#!/usr/bin/perl
# Perl Sereal as an oracle for tests/perl_oracle.rs.
#
# Run with PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0. Two modes, both speaking
# length-prefixed frames (lengths are 4-byte big-endian) on stdin/stdout:
#
#   perl oracle.pl roundtrip
#     Reads requests until EOF: version (1 byte), length, document.
#     For each, decodes the document and re-encodes the result with
#     {canonical => 1, protocol_version => version}, answering
#     "O" length bytes, or "E" length message when Perl failed.
#
#   perl oracle.pl generate COUNT SEED
#     Builds COUNT random graphs (srand SEED). For each, picks a protocol
#     version v in 1..5 and a string deduplication d (0: none, 1:
#     dedupe_strings, 2: aliased_dedupe_strings), encodes the graph at v
#     with d and otherwise default options (srl), decodes srl and re-encodes
#     that with {canonical => 1, protocol_version => v} (canon), and writes
#     "O" v + 16 * d (1 byte) length srl length canon, or "E" length message.
use strict;
use warnings;
use Sereal::Encoder;
use Sereal::Decoder;
use Scalar::Util qw(weaken isweak reftype refaddr);
use FindBin;
use lib $FindBin::Bin;
use Cycles qw(break_cycles);

binmode STDIN;
binmode STDOUT;
$| = 1;

my $mode = shift // die "usage: oracle.pl roundtrip | generate COUNT SEED\n";
my $decoder = Sereal::Decoder->new;
my (%canonical, %plain);
sub canonical_encoder {
    my ($v) = @_;
    return $canonical{$v} //= Sereal::Encoder->new({ canonical => 1, protocol_version => $v });
}
sub plain_encoder {
    my ($v, $d) = @_;
    my @dedupe = ([], [dedupe_strings => 1], [aliased_dedupe_strings => 1]);
    return $plain{"$v $d"} //= Sereal::Encoder->new({ protocol_version => $v, @{ $dedupe[$d] } });
}

sub read_exact {
    my ($n) = @_;
    my $buf = '';
    while (length($buf) < $n) {
        my $got = read(STDIN, $buf, $n - length($buf), length($buf));
        die "read: $!\n" unless defined $got;
        return undef if $got == 0;
    }
    return $buf;
}

sub frame { return pack('N', length $_[0]) . $_[0] }

sub error_frame {
    my ($msg) = @_;
    $msg = "unknown error" unless defined $msg && length $msg;
    utf8::encode($msg) if utf8::is_utf8($msg);
    return 'E' . frame($msg);
}


if ($mode eq 'roundtrip') {
    while (defined(my $hdr = read_exact(5))) {
        my ($v, $len) = unpack 'CN', $hdr;
        my $doc = read_exact($len) // die "truncated request\n";
        my ($data, $out);
        my $ok = eval {
            $data = $decoder->decode($doc);
            $out = canonical_encoder($v)->encode($data);
            1;
        };
        print $ok ? 'O' . frame($out) : error_frame("$@");
        break_cycles($data) if ref $data;
    }
    exit 0;
}

die "unknown mode $mode\n" unless $mode eq 'generate';
my ($count, $seed) = @ARGV;
die "usage: oracle.pl generate COUNT SEED\n" unless defined $seed;
srand($seed);

my (@pool, @anc);

sub pick { return $_[ int rand @_ ] }

sub upgraded {
    my ($s) = @_;
    utf8::upgrade($s);
    return $s;
}

sub random_text {
    my ($lo, $span, $max) = @_;
    return join '', map { chr($lo + int rand $span) } 1 .. int rand $max;
}

sub random_scalar {
    my $r = rand();
    return undef if $r < 0.05;
    return int(rand(32)) - 16 if $r < 0.17;
    return int(rand(2**40)) * (rand() < 0.5 ? -1 : 1) if $r < 0.25;
    return pick(18446744073709551615, 9223372036854775807, -9223372036854775807 - 1,
        9223372036854775808, 4294967296, -17, 16, 127, 128, 255, 256)
        if $r < 0.29;
    return rand() * 1e6 - 5e5 if $r < 0.34;
    return pick(0.5, -1.25, 3.0, 0.1, 1e300, -2.5e-310, 1 / 3, 65504.0, -0.0) if $r < 0.37;
    return random_text(97, 26, 40) if $r < 0.52;          # ASCII bytes, short and long
    return random_text(0x80, 0x80, 12) if $r < 0.57;      # high bytes, not UTF-8
    return random_text(0x100, 0x500, 20) if $r < 0.65;    # UTF-8 beyond Latin-1
    return upgraded(random_text(0xA0, 0x60, 10)) if $r < 0.69;   # UTF-8 within Latin-1
    return "\x{1F600}smile\x{263A}" if $r < 0.71;
    return upgraded("ascii utf8") if $r < 0.73;
    return "dupdupdup" if $r < 0.78;
    if ($r < 0.82) { my $n = int rand 1000; my $s = "$n"; return $n }   # IV with a PV
    if ($r < 0.84) { my $s = "" . (int rand 1000); my $n = $s + 0; return $s }  # PV with an IV
    return "" if $r < 0.86;
    return pick(!!1, !!0);
}

sub random_key {
    my $r = rand();
    return "k" . int rand 40 if $r < 0.6;
    return "a_longer_key_name_" . int rand 10 if $r < 0.7;
    return "\x{43A}\x{43B}\x{44E}\x{447}" . int rand 5 if $r < 0.8;
    return "\x{263A}" . int rand 5 if $r < 0.87;
    return upgraded("caf\xE9" . int rand 5) if $r < 0.94;
    return "" if $r < 0.96;
    return "bin\xFF" . int rand 5;
}

sub maybe_bless {
    my ($v) = @_;
    my $r = rand();
    return $v if $r < 0.85;
    return bless $v, ($r < 0.98 ? "Cls" . int rand 3 : "Cls\x{263A}");
}

sub weaken_some {
    my ($slots) = @_;
    for my $slot (@$slots) {
        weaken($$slot) if ref $$slot && rand() < 0.12;
    }
}

sub random_graph {
    my ($d) = @_;
    my $r = rand();
    return random_scalar() if $d > 5 || ($d > 0 && $r < 0.3);
    return pick(@pool) if @pool && $r < 0.42;
    return pick(@anc) if @anc && $r < 0.47;
    my $v;
    if ($r < 0.72) {
        $v = [];
        push @anc, $v;
        my $n = rand() < 0.05 ? 16 + int rand 4 : int rand 7;
        push @$v, random_graph($d + 1) for 1 .. $n;
        pop @anc;
        weaken_some([ map { \$_ } @$v ]);
        if (@$v && rand() < 0.15) {    # a reference to a slot: the slot is then an alias
            my $i = int rand @$v;
            push @pool, \$v->[$i] unless isweak($v->[$i]);
        }
    }
    elsif ($r < 0.9) {
        $v = {};
        push @anc, $v;
        my $n = rand() < 0.05 ? 16 + int rand 4 : int rand 7;
        $v->{ random_key() } = random_graph($d + 1) for 1 .. $n;
        pop @anc;
        weaken_some([ map { \$_ } values %$v ]);
        if (%$v && rand() < 0.15) {
            my $k = pick(keys %$v);
            push @pool, \$v->{$k} unless isweak($v->{$k});
        }
    }
    else {
        my $s;
        $v = \$s;
        push @anc, $v;
        $s = random_graph($d + 1);
        pop @anc;
        weaken_some([$v]);
    }
    maybe_bless($v);
    push @pool, $v if rand() < 0.3;
    return $v;
}

for my $i (1 .. $count) {
    my $v = 1 + int rand 5;
    my $r = rand();
    my $d = $r < 0.5 ? 0 : $r < 0.85 ? 1 : 2;
    @pool = ();
    my $data = random_graph(0);
    @pool = () if rand() < 0.5;   # sometimes the pool still holds counts while encoding
    my ($srl, $canon, $back);
    my $ok = eval {
        $srl = plain_encoder($v, $d)->encode($data);
        $back = $decoder->decode($srl);
        $canon = canonical_encoder($v)->encode($back);
        1;
    };
    my $err = "case $i: $@";
    $err .= "srl: " . unpack('H*', $srl) if !$ok && defined $srl;
    print $ok ? 'O' . pack('C', $v + 16 * $d) . frame($srl) . frame($canon) : error_frame($err);
    @pool = ();
    break_cycles($data, $back);
}
