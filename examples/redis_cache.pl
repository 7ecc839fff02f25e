#!/usr/bin/env perl
# The Perl half of examples/redis_cache.rs (and of tests/redis_interop.rs):
# a Perl service that caches a session in Redis as a Sereal blob.
#
#   perl examples/redis_cache.pl write   # SET session:42, zstd-compressed
#   perl examples/redis_cache.pl read    # GET session:42 and print it
#
# The server is $REDIS_SERVER (host:port, as Perl's Redis module reads it),
# 127.0.0.1:6379 by default. Needs Redis and Sereal for Perl
# (apt-get install libredis-perl libsereal-perl).
#
# `read` prints the session one line per value, keys sorted, so that two
# runs compare as text: each reference is `#N CLASS TYPE` where it is first
# met and `ref to #N` after, a weak one says so, and each scalar shows its
# kind as Perl holds it (int, num, bytes or utf8 string).
use strict; use warnings; use utf8;
use B ();
use Redis;
use Scalar::Util qw(blessed isweak refaddr reftype weaken);
use Sereal::Decoder;
use Sereal::Encoder;

my $KEY = 'session:42';
my $mode = shift // '';
my $redis = Redis->new;

if ($mode eq 'write') {
    # One team hash shared by both users; it points back at its owner
    # weakly, as Perl code does to avoid a reference cycle.
    my $team = { name => "Zoë's crew", plan => 'pro' };
    my $session = bless {
        id     => 42,
        visits => 3,
        users  => [
            bless({ id => 1, name => "Zoë", avatar => "\x89PNG\r\n\x1a\n", team => $team }, 'App::User'),
            bless({ id => 2, name => 'Ann', avatar => "\xff\xd8\xff\xe0", team => $team }, 'App::User'),
        ],
        recent => [ map { "/catalog/item/$_?ref=home&utm_source=newsletter" } 1 .. 25 ],
    }, 'App::Session';
    $team->{owner} = $session->{users}[0];
    weaken($team->{owner});
    # zstd, with the default compress_threshold (1024 bytes): this body is larger.
    my $blob = Sereal::Encoder->new({ compress => Sereal::Encoder::SRL_ZSTD })->encode($session);
    $redis->set($KEY, $blob);
    printf "perl: SET %s, %d bytes\n", $KEY, length $blob;
} elsif ($mode eq 'read') {
    my $blob = $redis->get($KEY) // die "$KEY is not in Redis\n";
    my $type = ord(substr $blob, 4, 1) >> 4;
    printf "perl: GET %s, %d bytes, %s\n", $KEY, length $blob,
        (qw(raw snappy-legacy snappy zlib zstd))[$type] // "type $type";
    my $session = Sereal::Decoder->new->decode($blob);
    my $users = $session->{users};
    printf "users share one team: %s\n",
        refaddr($users->[0]{team}) == refaddr($users->[1]{team}) ? 'yes' : 'no';
    my $owner = \$users->[0]{team}{owner};
    printf "team owner is user 1, weakly: %s\n",
        isweak($$owner) && refaddr($$owner) == refaddr($users->[0]) ? 'yes' : 'no';
    my %label;
    show($session, '$session', \%label);
} else {
    die "usage: $0 write|read\n";
}

# Prints the value in $_[0] (an alias of the slot, so isweak sees the slot)
# at $path, and what it refers to.
sub show {
    my (undef, $path, $label) = @_;
    my $v = $_[0];
    if (!defined $v) {
        print "$path = undef\n";
    } elsif (!ref $v) {
        print "$path = ", scalar_text($_[0]), "\n";
    } else {
        my $weak = isweak($_[0]) ? 'weak ' : '';
        if (my $n = $label->{refaddr $v}) {
            print "$path = ${weak}ref to #$n\n";
            return;
        }
        my $n = $label->{refaddr $v} = 1 + keys %$label;
        my $class = blessed($v) ? blessed($v) . ' ' : '';
        print "$path = $weak#$n $class", reftype($v), "\n";
        my $at = $path =~ /[]}]$/ ? $path : "$path->";
        if (reftype($v) eq 'HASH') {
            show($v->{$_}, "$at\{$_}", $label) for sort keys %$v;
        } elsif (reftype($v) eq 'ARRAY') {
            show($v->[$_], "$at\[$_]", $label) for 0 .. $#$v;
        } else {
            show($$v, "\${$path}", $label);
        }
    }
}

# A scalar's kind and value, escaped to printable ASCII.
sub scalar_text {
    my $flags = B::svref_2object(\$_[0])->FLAGS;
    my $v = $_[0];
    return "int $v" if $flags & B::SVf_IOK && !($flags & B::SVf_POK);
    return "num $v" if $flags & B::SVf_NOK && !($flags & B::SVf_POK);
    my $utf8 = utf8::is_utf8($v);
    my $text = join '', map {
        $_ == 0x22 || $_ == 0x5c ? "\\" . chr
            : $_ >= 0x20 && $_ < 0x7f ? chr
            : $utf8 ? sprintf('\x{%x}', $_)
            : sprintf('\x%02x', $_)
    } unpack($utf8 ? 'W*' : 'C*', $v);
    return ($utf8 ? 'utf8' : 'bytes') . qq{ "$text"};
}
