#!/usr/bin/perl
# Builds the wide conformance corpus (tests/corpus/perl-sereal-5.003-wide/)
# with the installed Sereal::Encoder/Decoder 5.003: the option profiles the
# 14-profile corpus lacks, over random graphs with FREEZE objects, aliases,
# shared sub-structures, weak refs and cycles, plus a few structured cases.
#
# Usage (from the repository root; the hash seed fixes Perl's key order):
#   PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 perl author_tools/make_wide_corpus.pl \
#       --random 300 --seed 10 --out tests/corpus/perl-sereal-5.003-wide
# --only REGEX writes only the profiles whose name matches.
#
# Each profile becomes OUT/<profile>.jsonl.zst (piped through `zstd -19`),
# one case a line, in the record format of tests/corpus/README.md: id, name,
# profile, options, srl (base64: Perl's encoding of the case), canon (base64:
# Perl's re-encoding of Perl's decoding of srl, same options) or error.
# In the *_header profiles srl is `$enc->encode($data, $header)` and canon
# re-encodes both halves of `$dec->decode_with_header($srl)`; the user
# header data is in the documents' bytes, so the record needs no new field.
use strict; use warnings;
use Sereal::Encoder qw(SRL_SNAPPY SRL_ZLIB SRL_ZSTD); use Sereal::Decoder;
use MIME::Base64 qw(encode_base64); use Getopt::Long; use Scalar::Util qw(weaken);
use JSON::PP; use POSIX ();
use FindBin; use lib "$FindBin::Bin/../tests/corpus"; use CorpusCases;

my ($out, $random, $seed, $only) = (undef, 300, 10, '');
GetOptions('out=s'=>\$out, 'random=i'=>\$random, 'seed=i'=>\$seed, 'only=s'=>\$only) or die;
die "--out required" unless $out; mkdir $out;
die "run with PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0\n"
  unless ($ENV{PERL_HASH_SEED} // '') eq '0' && ($ENV{PERL_PERTURB_KEYS} // '') eq '0';

# name => [options, with user header data]
my %profiles = (
  v5_sort_keys2 => [{sort_keys=>2}], v5_sort_keys3 => [{sort_keys=>3}],
  v5_no_bless_objects => [{no_bless_objects=>1}],
  v1_no_bless_objects => [{no_bless_objects=>1, protocol_version=>1}],
  v5_snappy_level => [{compress=>SRL_SNAPPY, compress_level=>1, compress_threshold=>0}],
  v5_zlib_level1 => [{compress=>SRL_ZLIB, compress_level=>1, compress_threshold=>0}],
  v5_zlib_level9 => [{compress=>SRL_ZLIB, compress_level=>9, compress_threshold=>0}],
  v5_zstd_level1 => [{compress=>SRL_ZSTD, compress_level=>1, compress_threshold=>0}],
  v5_zstd_level19 => [{compress=>SRL_ZSTD, compress_level=>19, compress_threshold=>0}],
  v3_zstd_level22 => [{compress=>SRL_ZSTD, compress_level=>22, compress_threshold=>0, protocol_version=>3}],
  v3_freeze => [{freeze_callbacks=>1, protocol_version=>3}],
  v2_freeze => [{freeze_callbacks=>1, protocol_version=>2}],
  v4_freeze => [{freeze_callbacks=>1, protocol_version=>4}],
  v5_freeze => [{freeze_callbacks=>1}],
  v5_freeze_dedupe => [{freeze_callbacks=>1, dedupe_strings=>1}],
  v5_freeze_aliased_dedupe => [{freeze_callbacks=>1, aliased_dedupe_strings=>1}],
  v2_header => [{protocol_version=>2}, 1], v3_header => [{protocol_version=>3}, 1],
  v4_header => [{protocol_version=>4}, 1], v5_header => [{}, 1],
  v5_header_zlib => [{compress=>SRL_ZLIB, compress_threshold=>0}, 1],
  v5_header_freeze_aliased_dedupe => [{freeze_callbacks=>1, aliased_dedupe_strings=>1}, 1],
);
my %short = (dedupe_strings=>'dedupe', aliased_dedupe_strings=>'aliased_dedupe',
             canonical=>'canonical', no_shared_hashkeys=>'no_shared_hashkeys');
for my $v (1 .. 5) {
  for my $o (sort keys %short) { $profiles{"v${v}_$short{$o}"} = [{$o=>1, protocol_version=>$v}] }
}

# Frozen, the FREEZE/THAW class the conformance harness knows
# (tests/corpus/README.md), comes with tests/corpus/CorpusCases.pm.

srand($seed);
my @cases;  # [name, data, header, whatever must outlive the encoding]
push @cases, map { [$_->[0], $_->[1], "hdr", []] } structured_cases();
for my $n (1 .. $random) {
  my @pool;
  my $data = random_graph(0, \@pool);
  my $header = random_graph(2, \@pool) // "hdr";
  push @cases, ["random $seed/$n", $data, $header, \@pool];
}

# Perl's decoder corrupts its heap on some FREEZE graphs ("Attempt to free
# unreferenced scalar", later a crash), so each case runs in a child process
# of its own: what one case breaks cannot touch another. A case during
# which Perl warns or dies keeps its srl; its canon is left out and the
# record says why in `error` (the conformance check then requires only that
# srl decodes).
my $json = JSON::PP->new->canonical;
for my $p (sort keys %profiles) {
  next if $only ne '' && $p !~ /$only/;
  my ($opt, $with_header) = @{$profiles{$p}};
  open my $fh, '|-', 'zstd', '-19', '-q', '-f', '-o', "$out/$p.jsonl.zst" or die "zstd: $!";
  my $id = 0;
  for my $c (@cases) {
    my %rec = (id => $id++, name => $c->[0], profile => $p, options => $opt);
    my %got = run_case($opt, $with_header, $c);
    $rec{$_} = $got{$_} for grep { defined $got{$_} } qw(srl canon error);
    print $fh $json->encode(\%rec), "\n";
  }
  close $fh or die "zstd failed for $p";
}
print scalar(@cases), " cases x ", scalar(grep { $only eq '' || /$only/ } keys %profiles), " profiles\n";

# Encodes a case, decodes the document and re-encodes it, in a child
# process; returns srl and canon (base64), and error where Perl failed
# (addresses in Perl's messages blanked, so the output is reproducible).
sub run_case {
  my ($opt, $with_header, $c) = @_;
  pipe(my $r, my $w) or die "pipe: $!";
  my $pid = fork() // die "fork: $!";
  if (!$pid) {
    close $r; binmode $w; my $old = select $w; $| = 1; select $old;
    my @warnings; local $SIG{__WARN__} = sub { push @warnings, $_[0] };
    my $enc = Sereal::Encoder->new({%$opt}); my $dec = Sereal::Decoder->new();
    my ($srl, $canon);
    if (eval { $srl = $with_header ? $enc->encode($c->[1], $c->[2]) : $enc->encode($c->[1]); 1 }) {
      print $w "srl ", encode_base64($srl, ''), "\n";
      my $ok = eval {
        if ($with_header) {
          my ($h, $b) = @{$dec->decode_with_header($srl)};
          $canon = $enc->encode($b, $h);
        } else {
          $canon = $enc->encode($dec->decode($srl));
        }
        1
      };
      if (!$ok) { print $w "error decode/reencode: ", oneline($@), "\n" }
      elsif (@warnings) { print $w "error perl warned: ", oneline(join "", @warnings), "\n" }
      else { print $w "canon ", encode_base64($canon, ''), "\n" }
    } else {
      print $w "error ", oneline($@), "\n";
    }
    close $w;
    POSIX::_exit(0);
  }
  close $w;
  my %got = map { /^(\w+) (.*)$/ ? ($1 => $2) : () } <$r>;
  close $r; waitpid($pid, 0);
  if ($? != 0) {
    delete $got{canon};
    $got{error} = "perl died (wait status $?) after: " . join(", ", sort keys %got);
  }
  return %got;
}
sub oneline { my $s = shift; $s =~ s/\s+/ /g; $s =~ s/0x[0-9a-f]+/0x.../g; $s =~ s/ $//; return $s }

# An array holding the arguments themselves (aliases), made refcounted (a
# bare `\@_` does not own its elements; pushing to it makes it own them).
sub aliased { my $v = \@_; push @$v, undef; pop @$v; return $v }

sub structured_cases {
  my @x;
  # the extra cases of tests/corpus/make_corpus.pl
  push @x, extra_cases();
  # aliases and FREEZE objects around them
  my @a = (1, "two"); $a[0] = \$a[1]; push @x, ["element refers to the next element", \@a];
  my @b = ("one", 2); $b[1] = \$b[0]; push @x, ["element refers to the previous element", \@b];
  my $x = "abcdef"; push @x, ["two refs to one scalar", [\$x, \$x]];
  push @x, ["one scalar twice in an array (alias)", aliased($x, $x, "abcdef")];
  my %hh = (a => "value", b => 2); $hh{b} = \$hh{a}; push @x, ["hash value refers to a hash value", \%hh];
  my $fv = "frozen value"; push @x, ["frozen value is an alias target", [\$fv, Frozen->new($fv), aliased($fv, $fv)]];
  my $fo = Frozen->new(undef); $fo->{v} = [$fo]; push @x, ["frozen object holding itself", $fo];
  my $fr = Frozen->new(\"inner"); push @x, ["frozen values shared", [$fr, Frozen->new($fr->{v}), $fr->{v}]];
  push @x, ["frozen extra strings deduped", [map { Frozen->new("extra") } 1..4]];
  push @x, ["numbers", [0, -1, 1, 15, 16, -16, -17, 2**31, -2**31, 2**32, 2**53, 2**63, -2**63,
                        18446744073709551615, 9223372036854775807, -9223372036854775808,
                        0.5, -1.25, 1e300, -1e-300, 1/3, 9**9**9, -9**9**9, 0.0 * -1]];
  push @x, ["strings", ["", "0", "00", "1.5", "caf\xe9", do { my $u = "caf\xe9"; utf8::upgrade($u); $u },
                        "\x{263a}\x{1F600}", "\xff\x00\x80", "x" x 100]];
  return @x;
}

my @strings;
BEGIN { @strings = ("dupe string", "caf\x{e9} au lait", "\x{263a} smile", "extra", "abcd", "abc", "", "0", "12345") }
sub random_scalar {
  my $r = rand();
  return undef if $r < 0.04;
  return int(rand(40)) - 20 if $r < 0.18;
  return int(rand(2**40)) * (rand() < 0.5 ? -1 : 1) if $r < 0.24;
  return (18446744073709551615, 9223372036854775807, -9223372036854775808, 2**63, -2**62)[int rand 5] if $r < 0.28;
  return (rand() - 0.5) * 1e6 if $r < 0.34;
  return (0.5, -0.25, 1e100, 3.25e-10, 1/7)[int rand 5] if $r < 0.37;
  return join("", map { chr(97 + int rand 26) } 1 .. int(rand(20))) if $r < 0.5;
  return join("", map { chr(0x80 + int rand 0x80) } 1 .. int(rand(10))) if $r < 0.55;
  return join("", map { chr(0x100 + int rand 0x500) } 1 .. int(rand(10))) if $r < 0.62;
  return $strings[int rand @strings] if $r < 0.92;
  return !!(rand() < 0.5);
}
my @keys;
BEGIN { @keys = (map({ "k$_" } 0 .. 15), "caf\x{e9}", "\x{263a}", "a long key name", "extra", "v") }
sub random_key { return $keys[int rand @keys] }
# A random graph; pool holds candidates for sharing (and keeps weakly held
# referents alive until encoded).
sub random_graph {
  my ($d, $pool) = @_;
  my $r = rand();
  if ($d > 4 || $r < 0.25) { return random_scalar(); }
  if (@$pool && $r < 0.37) { return $pool->[int rand @$pool]; }
  my $v;
  if ($r < 0.55) { $v = [ map { random_graph($d + 1, $pool) } 1 .. int(rand(6)) ]; }
  elsif ($r < 0.7) { $v = { map { (random_key() => random_graph($d + 1, $pool)) } 1 .. int(rand(6)) }; }
  elsif ($r < 0.85) { $v = Frozen->new(random_graph($d + 1, $pool)); }
  elsif ($r < 0.9) { my $s = random_scalar(); $v = \$s; }
  elsif ($r < 0.95) {
    # aliases: an array holding one scalar several times, and refs to its elements
    my $s = random_scalar(); my $t = random_scalar();
    $v = aliased($s, $t, $s);
    push @$v, \$v->[1] if rand() < 0.5;
    $v->[0] = \$v->[1] if rand() < 0.3;
  }
  else {
    my $class = ("Cls0", "Cls1", "Cl\x{e9}ss")[int rand 3];
    $v = rand() < 0.5 ? bless([ map { random_graph($d + 1, $pool) } 1 .. 3 ], $class)
                      : bless({ random_key() => random_graph($d + 1, $pool) }, $class);
  }
  push @$pool, $v if rand() < 0.35;
  if (@$pool && rand() < 0.25) {
    # a cycle or a shared sub-structure, strong or weak
    my $target = $pool->[int rand @$pool];
    if (ref($v) eq 'ARRAY' || ref($v) =~ /^Cls/ && Scalar::Util::reftype($v) eq 'ARRAY') {
      push @$v, $target; weaken($v->[-1]) if rand() < 0.4;
    } elsif (Scalar::Util::reftype($v) eq 'HASH' && !(ref($v) eq 'Frozen')) {
      $v->{back} = $target; weaken($v->{back}) if rand() < 0.4;
    } elsif (ref($v) eq 'Frozen' && ref($v->{v}) eq 'ARRAY') {
      push @{$v->{v}}, $target; weaken($v->{v}[-1]) if rand() < 0.4;
    }
  }
  return $v;
}
