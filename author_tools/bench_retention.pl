#!/usr/bin/perl
# bench_retention.pl - encoder (or, with --decode, decoder) median time and
# peak memory of Perl's installed Sereal, on the same inputs as the Rust
# `bench_retention` binary.
#
#   PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 perl author_tools/bench_retention.pl \
#       --case records --count 200000 --iterations 9 [--protocol-version 5] [--json] [--decode]
#
# Prints one line: case=... mode=... count=... iterations=... median_ms=... min_ms=...
# max_ms=... bytes=... checksum=... peak_rss_kb=...  (checksum: the sum of the
# output bytes modulo 2**32; peak_rss_kb: the process's own peak, VmHWM).
# --decode encodes the input once, then times K decodes of that document by
# one Sereal::Decoder, each decoded value freed outside the timed region;
# bytes and checksum are the document's.
use strict;
use warnings;
use Getopt::Long;
use Time::HiRes qw(time);
use Sereal::Encoder;
use Sereal::Decoder;

my %default_count = (records => 200000, arrays => 300000, scalars => 200000,
                     keys => 300000, shared => 200000, frozen => 200000);
my ($case, $count, $iterations, $version, $json, $decode) = ('records', undef, 9, 5, 0, 0);
GetOptions('case=s' => \$case, 'count=i' => \$count, 'iterations=i' => \$iterations,
           'protocol-version=i' => \$version, 'json' => \$json, 'decode' => \$decode)
    or die "usage: $0 --case CASE [--count N] [--iterations K] [--protocol-version V] [--json] [--decode]\n";
die "unknown case '$case'\n" unless exists $default_count{$case};
$count //= $default_count{$case};
die "--iterations must be at least 1\n" if $iterations < 1;

# THAW rebuilds the object from [id, name], as the Rust side's handler does.
package Rec {
    sub FREEZE { my ($self) = @_; return [$self->{id}, $self->{name}] }
    sub THAW { my ($class, $serializer, $data) = @_; return bless { id => $data->[0], name => $data->[1] }, $class }
}
package main;

sub record {
    my ($i) = @_;
    return { id => $i, name => "user$i", email => "user$i\@example.com",
             score => 2 * $i + 1, active => $i % 2,
             tags => ["t" . ($i % 7), "t" . ($i % 11)],
             address => { city => "city" . ($i % 100), zip => sprintf("%05d", $i % 100000) } };
}

my $data;
my %opt = (protocol_version => $version);
if ($case eq 'records') {
    $data = [ map { record($_) } 0 .. $count - 1 ];
} elsif ($case eq 'arrays') {
    $data = [ map { [$_] } 0 .. $count - 1 ];
} elsif ($case eq 'scalars') {
    $data = [ map { $_ % 2 ? $_ : "s$_" } 0 .. $count - 1 ];
} elsif ($case eq 'keys') {
    my %h; $h{"key$_"} = $_ for 0 .. $count - 1; $data = \%h;
} elsif ($case eq 'shared') {
    my @groups = map { { gid => $_, label => "group$_" } } 0 .. 99;
    $data = [ map { my $r = record($_); $r->{group} = $groups[$_ % 100]; $r } 0 .. $count - 1 ];
} elsif ($case eq 'frozen') {
    $data = [ map { bless record($_), 'Rec' } 0 .. $count - 1 ];
    $opt{freeze_callbacks} = 1;
}

my $enc = Sereal::Encoder->new(\%opt);
my $out = $enc->encode($data);    # warm-up, or the document --decode decodes
my @ms;
if ($decode) {
    my $dec = Sereal::Decoder->new;
    for (1 .. $iterations) {
        my $t0 = time;
        my $v = $dec->decode($out);
        push @ms, (time - $t0) * 1000;
        undef $v;    # freeing the graph is not part of the decode
    }
} else {
    for (1 .. $iterations) {
        my $t0 = time;
        $out = $enc->encode($data);
        push @ms, (time - $t0) * 1000;
    }
}
my @sorted = sort { $a <=> $b } @ms;
my $median = @sorted % 2 ? $sorted[$#sorted / 2] : ($sorted[@sorted / 2 - 1] + $sorted[@sorted / 2]) / 2;
my $checksum = unpack("%32C*", $out);
my $rss = 0;
if (open my $fh, '<', '/proc/self/status') {
    while (<$fh>) { $rss = $1 if /^VmHWM:\s+(\d+)/ }
}
my %r = (case => $case, mode => ($decode ? 'decode' : 'encode'), count => $count, iterations => $iterations,
         median_ms => sprintf("%.3f", $median), min_ms => sprintf("%.3f", $sorted[0]),
         max_ms => sprintf("%.3f", $sorted[-1]), bytes => length($out),
         checksum => $checksum, peak_rss_kb => $rss);
my @order = qw(case mode count iterations median_ms min_ms max_ms bytes checksum peak_rss_kb);
if ($json) {
    print "{", join(",", map { my $v = $r{$_}; $v =~ /^-?[\d.]+$/ ? "\"$_\":$v" : "\"$_\":\"$v\"" } @order), "}\n";
} else {
    print join(" ", map { "$_=$r{$_}" } @order), "\n";
}
