#!/usr/bin/perl
# Writes the large document of issue 11 to the file named: 1M small hashes
# (records of 9 fields and a tag list), about 11M values, about 93 MB,
# written by Perl's Sereal::Encoder. Usage: perl cli/bench/big_document.pl big.srl
use strict;
use warnings;
use Sereal::Encoder;

my $out = shift or die "usage: $0 OUT.srl\n";
my @records = map {
    {
        id     => $_,
        name   => "user$_",
        email  => "user$_\@mail.example.com",
        score  => 2 * $_ + 1,
        active => $_ % 2,
        city   => "city" . ($_ % 100),
        region => "region-" . ($_ % 50),
        zip    => sprintf("%05d", $_ % 100000),
        tags   => ["t" . ($_ % 7)],
    }
} 0 .. 999_999;
open my $fh, '>', $out or die "$out: $!\n";
binmode $fh;
print $fh Sereal::Encoder->new->encode(\@records);
close $fh or die "$out: $!\n";
