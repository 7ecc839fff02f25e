# Freeing the cyclic graphs Perl's decoder makes, for the Perl oracles
# (oracle.pl, view.pl), which decode many documents in one process.
package Cycles;
use strict;
use warnings;
use Exporter 'import';
use Scalar::Util qw(reftype refaddr);

our @EXPORT_OK = qw(break_cycles);

# Clears every container reachable from the arguments, so cyclic graphs are
# freed. Everything visited is kept alive until the end so that addresses are
# not reused while the walk runs.
sub break_cycles {
    my @todo = @_;
    my (%seen, @keep);
    while (@todo) {
        my $x = pop @todo;
        next unless ref $x;
        next if $seen{ refaddr $x }++;
        push @keep, $x;
        my $t = reftype $x;
        if ($t eq 'ARRAY') { push @todo, @$x; @$x = (); }
        elsif ($t eq 'HASH') { push @todo, values %$x; %$x = (); }
        elsif ($t eq 'SCALAR' || $t eq 'REF') { push @todo, $$x; eval { $$x = undef; 1 }; }
    }
    @keep = ();
}

1;
