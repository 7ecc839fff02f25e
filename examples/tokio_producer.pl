#!/usr/bin/env perl
# The Perl half of examples/tokio_consumer.rs (and of tests/codec.rs): a
# producer that connects to a consumer on 127.0.0.1:PORT and writes COUNT
# records as concatenated Sereal documents, some compressed.
#
#   perl examples/tokio_producer.pl PORT COUNT
#
# Record $i is {id => $i, name => "user $i", email => "user$i\@example.com",
# tags => ["t1" .. "t" . $i % 4]}. Needs Sereal for Perl
# (apt-get install libsereal-perl).
use strict; use warnings;
use IO::Socket::INET;
use Sereal::Encoder qw(SRL_SNAPPY SRL_ZLIB SRL_ZSTD);

my ($port, $count) = @ARGV;
die "usage: $0 PORT COUNT\n" unless $port && defined $count;
my $socket = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port)
    or die "connect to 127.0.0.1:$port: $@\n";
binmode $socket;

# Plain, zstd, Snappy, zlib and protocol 3 documents in turn.
my @encoders = map { Sereal::Encoder->new($_) } (
    {},
    { compress => SRL_ZSTD,   compress_threshold => 0 },
    { compress => SRL_SNAPPY, compress_threshold => 0 },
    { compress => SRL_ZLIB,   compress_threshold => 0 },
    { protocol_version => 3 },
);
for my $i (1 .. $count) {
    my $record = {
        id    => 0 + $i,
        name  => "user $i",
        email => "user$i\@example.com",
        tags  => [ map { "t$_" } 1 .. $i % 4 ],
    };
    print {$socket} $encoders[$i % @encoders]->encode($record) or die "write: $!\n";
}
close $socket or die "close: $!\n";
