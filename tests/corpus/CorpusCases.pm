# The cases both corpus generators share (make_corpus.pl's extra cases,
# the first structured cases of author_tools/make_wide_corpus.pl), and the
# corpus's FREEZE/THAW class, Frozen.
package CorpusCases;
use strict; use warnings;
use Scalar::Util qw(weaken);
use Exporter 'import';
our @EXPORT = qw(extra_cases);

package Frozen { sub new { bless { v => $_[1] }, $_[0] } sub FREEZE { my ($s, $ser) = @_; return ($s->{v}, "extra") } sub THAW { my ($c, $ser, @d) = @_; return bless { v => $d[0] }, $c } }
sub extra_cases {
  my @x;
  my $shared = [1, 2]; push @x, ["shared arrayref twice", [$shared, $shared]];
  my $h = {a => 1}; push @x, ["shared hashref in hash", {x => $h, y => $h}];
  my $cyc = {}; $cyc->{self} = $cyc; push @x, ["self cycle", $cyc];
  my $wk = {}; $wk->{me} = $wk; weaken($wk->{me}); push @x, ["weak self", $wk];
  my $t = [1]; my $w = [$t, $t]; weaken($w->[1]); push @x, ["strong then weak", $w];
  my $t2 = [2]; my $w2 = [$t2, $t2]; weaken($w2->[0]); push @x, ["weak then strong", $w2];
  my $s = \"str"; push @x, ["scalar ref shared", [$s, $s, \$s]];
  push @x, ["frozen object", Frozen->new([1, "two"])];
  my $f = Frozen->new(5); push @x, ["frozen object shared", [$f, $f, Frozen->new(6)]];
  push @x, ["objects same class", [map { bless {n => $_}, "Some::Class" } 1..5]];
  push @x, ["booleans", [!!1, !!0, 1 == 1, 1 == 0]];
  push @x, ["nested records", [map { +{ id => $_, name => "user$_", tags => ["a", "b"], addr => { city => "c$_" } } } 1..20]];
  push @x, ["unicode keys", { "\x{263a}" => 1, "caf\x{e9}" => 2 }];
  return @x;
}

1;
