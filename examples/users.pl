#!/usr/bin/env perl
# Writes examples/users.srl, the sample document of the README, with Perl's
# Sereal::Encoder (apt-get install libsereal-perl):
#   PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 perl examples/users.pl > examples/users.srl
use strict; use warnings; use utf8;
use Sereal::Encoder qw(encode_sereal);
my $group = { name => "admins" };
my $doc = {
    group => $group,
    users => [
        bless({ id => 1, name => "Zoë", group => $group }, "My::User"),
        bless({ id => 2, name => "Ann", group => $group }, "My::User"),
    ],
    score => 0.5,
};
binmode STDOUT;
print Sereal::Encoder->new({ sort_keys => 1 })->encode($doc);
