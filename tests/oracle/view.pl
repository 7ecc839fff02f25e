#!/usr/bin/perl
# Perl's Sereal as the oracle of tests/view_perl.rs: what the view selects,
# merges and splits, checked against what Perl's decoder makes of the same
# documents.
#
#   perl view.pl < CASES
#
# Run with PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0. CASES is a stream of
# records: a kind byte, then fields, each a 4-byte big-endian length and
# its bytes (a count is a field's length alone):
#
#   D LABEL DOC
#     The document the following records read, decoded whole here; it
#     starts the document's table of byte strings, as its entry 0.
#   B BYTES
#     The next entry of the document's table (a document the view made).
#   P PATH COUNT ENTRY...
#     PATH (UTF-8) and, as table entries, the documents the view made of
#     what it selects (Item::to_document), in its order. Perl walks PATH
#     in its decoding of the document; each match must equal Perl's
#     decoding of the view's document of it, and there must be as many.
#     A wildcard over a hash takes Perl's key order, so the matches are
#     then compared as a multiset.
#   M LABEL FLAT OUT COUNT INPUT...
#     OUT, merged from the INPUTs, must decode to the array of their
#     decodings (FLAT "1": of their arrays' elements), in order.
#   S LABEL DOC COUNT CHUNK...
#     Each CHUNK must decode to the next elements of DOC's root array; the
#     chunks must hold them all.
#   R LABEL DOC
#     DOC's root array must be referred to from inside itself (what makes
#     a flat merge or a split refuse it).
#
# Values are compared as graphs: undef-ness, strings (with their UTF-8
# flag), numbers and booleans as Perl flags them, classes, reference types,
# weak-ness, regexps, and sharing: a bijection between the addresses of the
# two sides' scalars, arrays and hashes, so that a value met twice on one
# side is met twice on the other (aliases included) and cycles close. A
# weak reference may come back strong where the view writes it strong, as
# its documentation says: where nothing else in the document made holds
# its referent (decoded alone, the referent would be freed), and in a
# chunk, where its referent is copied in from an earlier chunk. A match is
# compared as a value (its own scalar may be an element of what it holds,
# which the root of a document is not).
#
# Prints "FAIL LABEL [PATH]: why" and indented details for each failure,
# and last "summary NAME=COUNT...".
use strict;
use warnings;
no warnings 'experimental::builtin';
use B ();
use Data::Dumper ();
use Scalar::Util qw(blessed reftype refaddr isweak);
use Sereal::Decoder;
use FindBin;
use lib $FindBin::Bin;
use Cycles qw(break_cycles);

$Data::Dumper::Sortkeys = 1;
$Data::Dumper::Indent = 0;
$Data::Dumper::Useqq = 1;
$Data::Dumper::Terse = 1;
$Data::Dumper::Maxdepth = 8;

# Objects Perl's THAW made, by address, in the document being walked: a
# FREEZE object is one value to the view (Kind::Frozen), not a container.
our %THAWED;

package Frozen {
    # tests/corpus/README.md: FREEZE returned ($self->{v}, "extra").
    sub THAW {
        my ($class, $serializer, @v) = @_;
        my $o = bless { v => $v[0] }, $class;
        $main::THAWED{ Scalar::Util::refaddr($o) } = 1;
        return $o;
    }
}

binmode STDIN;
my $decoder = Sereal::Decoder->new;
my %count = map { $_ => 0 } qw(docs paths matches merges inputs splits chunks rootrefs failures);
# What is being checked: a label, and the path being walked, if any.
our ($label, $path) = ('');
# The document's table: its byte strings, what Perl decodes of each (when
# asked), and comparisons of Perl's matches with them made.
my ($whole, @table, @decoded, %compared);

# Reports a failure: why, and details (lines, or subs that make them).
sub fail {
    my ($why, @detail) = @_;
    $count{failures}++;
    my $at = defined $path ? ' ' . dump_value($path) : '';
    print "FAIL $label$at: $why\n";
    print "    $_\n" for map { ref eq 'CODE' ? $_->() : $_ } @detail;
    return 1;
}

# A failure's detail line: what the document (the second argument, not
# copied) is, and it in hex (its first 10,000 bytes), made when needed.
sub shown {
    my ($what, $doc) = ($_[0], \$_[1]);
    return sub {
        my $hex = unpack 'H*', substr($$doc, 0, 10000);
        return "$what: " . (length $$doc > 10000 ? "$hex... (" . length($$doc) . ' bytes)' : $hex);
    };
}

sub dump_value {
    my ($v) = @_;
    my $d = Data::Dumper::Dumper($v);
    return length $d > 4000 ? substr($d, 0, 4000) . '...' : $d;
}

# The document (not copied) decoded into a scalar of its own (which a
# reference to the root refers to), or undef and the error.
sub decode_doc {
    my $root;
    my $ok = eval { $decoder->decode($_[0], $root); 1 };
    return $ok ? (\$root, '') : (undef, $@ || 'unknown error');
}


# ------------------------------------------------------------ comparing

# Pairs address $x of the left side with $y of the right: 1 when new, 0
# when paired already, undef when either is paired with another.
sub pair {
    my ($ctx, $x, $y) = @_;
    my ($px, $py) = ($ctx->{l}{$x}, $ctx->{r}{$y});
    return 0 if defined $px && defined $py && $px == $y && $py == $x;
    return undef if defined $px || defined $py;
    $ctx->{l}{$x} = $y;
    $ctx->{r}{$y} = $x;
    return 1;
}

# What Perl knows of a plain scalar: defined, boolean, numeric and string
# flags, UTF-8 flag, and its text (read from a copy, which leaves the
# original's flags alone).
sub scalar_desc {
    my ($slot) = @_;
    return 'undef' unless defined $$slot;
    my $flags = B::svref_2object($slot)->FLAGS;
    my $kind = join '',
        (builtin::is_bool($$slot) ? 'b' : ''),
        ($flags & B::SVf_IOK ? 'i' : ''),
        ($flags & B::SVf_NOK ? 'n' : ''),
        ($flags & B::SVf_POK ? 'p' : ''),
        (utf8::is_utf8($$slot) ? 'u' : '');
    my $copy = $$slot;
    return "$kind:$copy";
}

# Compares the scalars the references $x (left) and $y (right) refer to;
# '' when they are the same graph, else where and how they differ. With
# $copy, the two are compared as values: not paired as scalars (met again
# inside themselves, they may be other scalars of the same value).
sub same {
    my ($x, $y, $ctx, $at, $copy) = @_;
    my $new = $copy ? 1 : pair($ctx, refaddr $x, refaddr $y);
    return "$at: shared differently (one side's scalar is met again where the other's is not)"
        unless defined $new;
    return '' unless $new;
    my ($rx, $ry) = (ref $$x ? 1 : 0, ref $$y ? 1 : 0);
    if (!$rx || !$ry) {
        return "$at: a reference and a plain scalar" if $rx || $ry;
        my ($dx, $dy) = (scalar_desc($x), scalar_desc($y));
        return $dx eq $dy ? '' : "$at: scalar $dx versus $dy";
    }
    my ($vx, $vy) = ($$x, $$y);
    for my $f (\&blessed, \&reftype) {
        my ($fx, $fy) = ($f->($vx) // '', $f->($vy) // '');
        return "$at: '$fx' versus '$fy'" if $fx ne $fy;
    }
    my ($wx, $wy) = (isweak($$x) ? 1 : 0, isweak($$y) ? 1 : 0);
    if ($wx != $wy && !($wx && $ctx->{weak_ok}->($vx))) {
        return "$at: " . ($wx ? 'weak versus strong' : 'strong versus weak');
    }
    my $t = reftype $vx;
    # A reference to a scalar: the scalar is a slot of its own.
    return same($vx, $vy, $ctx, "$at->\$*") if $t eq 'SCALAR' || $t eq 'REF';
    my $fresh = pair($ctx, refaddr $vx, refaddr $vy);
    return "$at: shared differently (one side's $t is met again where the other's is not)"
        unless defined $fresh;
    return '' unless $fresh;
    if ($t eq 'ARRAY') {
        return "$at: " . @$vx . ' versus ' . @$vy . ' elements' if @$vx != @$vy;
        for my $i (0 .. $#$vx) {
            my $d = same(\$vx->[$i], \$vy->[$i], $ctx, "$at\[$i]");
            return $d if $d;
        }
    } elsif ($t eq 'HASH') {
        my @kx = sort keys %$vx;
        my @ky = sort keys %$vy;
        return "$at: keys " . dump_value(\@kx) . ' versus ' . dump_value(\@ky)
            if join("\0", @kx) ne join("\0", @ky);
        for my $k (@kx) {
            my $d = same(\$vx->{$k}, \$vy->{$k}, $ctx, "$at" . '{' . dump_value($k) . '}');
            return $d if $d;
        }
    } elsif ($t eq 'REGEXP') {
        my ($px, $py) = map { join '/', re::regexp_pattern($_) } $vx, $vy;
        return "$at: regexp $px versus $py" if $px ne $py;
    } else {
        return "$at: a $t";
    }
    return '';
}

sub context {
    my ($weak_ok) = @_;
    return { l => {}, r => {}, weak_ok => $weak_ok // sub { 0 } };
}

# Adds to %$seen the addresses of the containers and scalars reachable
# from the slots @todo refers to (the slots included): through every
# reference, or only strong ones with $strong. Returns $seen.
sub reach {
    my ($seen, $strong, @todo) = @_;
    while (@todo) {
        my $slot = pop @todo;
        next if $seen->{ refaddr $slot }++;
        my $v = $$slot;
        next unless ref $v && !($strong && isweak($$slot));
        my $t = reftype $v;
        if ($t eq 'SCALAR' || $t eq 'REF') { push @todo, $v; next; }
        next if $seen->{ refaddr $v }++;
        if ($t eq 'ARRAY') { push @todo, map { \$v->[$_] } 0 .. $#$v; }
        elsif ($t eq 'HASH') { push @todo, map { \$v->{$_} } keys %$v; }
    }
    return $seen;
}

# ------------------------------------------------------------- the paths

# A path of the view's language (see src/view/path.rs) as steps: { all }
# (every element or value), { keys => [...] }, { idx => [[i] or [a, b, s]] }.
sub parse_path {
    my ($p) = @_;
    my $name = qr/[^.\[\]'",*:\s]+/;
    $p =~ s/^\$// or return;
    my @steps;
    while (length $p) {
        if ($p =~ s/^\.\*// || $p =~ s/^\[\s*\*\s*\]//) { push @steps, { all => 1 }; next; }
        if ($p =~ s/^\.($name)//) { push @steps, { keys => [$1] }; next; }
        $p =~ s/^\[// or return;
        my (@keys, @idx);
        while (1) {
            $p =~ s/^\s+//;
            if ($p =~ s/^'((?:[^'\\]|\\.)*)'// || $p =~ s/^"((?:[^"\\]|\\.)*)"//) {
                (my $k = $1) =~ s/\\(.)/$1/g;
                push @keys, $k;
            } elsif ($p =~ s/^(-?\d*)\s*:\s*(-?\d*)(?:\s*:\s*(-?\d*))?//) {
                push @idx, [map { defined && length ? $_ : undef } $1, $2, $3];
            } elsif ($p =~ s/^(-?\d+)//) {
                push @idx, [$1];
            } elsif ($p =~ s/^($name)//) {
                push @keys, $1;
            } else {
                return;
            }
            $p =~ s/^\s+//;
            last unless $p =~ s/^,//;
        }
        $p =~ s/^\s*\]// or return;
        return if @keys && @idx;
        push @steps, @keys ? { keys => \@keys } : { idx => \@idx };
    }
    return \@steps;
}

# Python's slice bound $i of an array of $len, clamped to [$lo, $hi]
# (CPython's PySlice_AdjustIndices).
sub bound {
    my ($i, $len, $lo, $hi) = @_;
    if ($i < 0) { $i += $len; $i = $lo if $i < $lo; }
    elsif ($i > $hi) { $i = $hi; }
    return $i;
}

# The elements of an array of $len that indexes and slices pick, in order.
sub picks {
    my ($len, $ix) = @_;
    my @out;
    for my $x (@$ix) {
        if (@$x == 1) {
            my $i = $x->[0] < 0 ? $x->[0] + $len : $x->[0];
            push @out, $i if $i >= 0 && $i < $len;
            next;
        }
        my ($from, $to, $step) = @$x;
        $step //= 1;
        my ($lo, $hi) = $step > 0 ? (0, $len) : (-1, $len - 1);
        my $i = defined $from ? bound($from, $len, $lo, $hi) : $step > 0 ? $lo : $hi;
        my $end = defined $to ? bound($to, $len, $lo, $hi) : $step > 0 ? $hi : $lo;
        for (; $step > 0 ? $i < $end : $i > $end; $i += $step) { push @out, $i; }
    }
    return @out;
}

# The slots the path's steps reach from the slot $root refers to, as
# Perl's -> reads them, and whether their order is known (a wildcard over
# a hash of several keys takes Perl's order).
sub walk {
    my ($root, $steps) = @_;
    my @here = ($root);
    my $ordered = 1;
    for my $st (@$steps) {
        my @next;
        for my $slot (@here) {
            my $c = $$slot;
            next unless ref $c && !$THAWED{ refaddr $c };
            my $t = reftype $c;
            if ($t eq 'ARRAY') {
                push @next, map { \$c->[$_] } $st->{all} ? (0 .. $#$c) : $st->{idx} ? picks(scalar @$c, $st->{idx}) : ();
            } elsif ($t eq 'HASH') {
                if ($st->{all}) {
                    push @next, map { \$c->{$_} } keys %$c;
                    $ordered = 0 if scalar(keys %$c) > 1;
                } elsif ($st->{keys}) {
                    push @next, map { exists $c->{$_} ? \$c->{$_} : () } @{ $st->{keys} };
                }
            }
        }
        @here = @next;
    }
    return (\@here, $ordered);
}

# A quick look at a value, that two the same share.
sub signature {
    my ($slot) = @_;
    my $v = $$slot;
    return scalar_desc($slot) unless ref $v;
    my $t = reftype $v;
    my $size = $t eq 'ARRAY' ? @$v : $t eq 'HASH' ? join("\0", sort keys %$v) : '';
    return join ':', blessed($v) // '', $t, $size;
}

# Compares Perl's match $slot with $r, its decoding of the view's document
# of it. The match is a value: its slot may be an element of what it
# holds (a cycle through it), which the document's root is not, and is
# compared as a copy. A weak reference whose referent the match does not
# hold strongly beside may come back strong (the document's only holder
# of it).
sub same_match {
    my ($slot, $r) = @_;
    my $strong = reach({}, 1, $slot);
    return same($slot, $r, context(sub { !$strong->{ refaddr $_[0] } }), '$', 1);
}

# Entry $i of the document's table, decoded (or undef and why not).
sub entry {
    my ($i) = @_;
    $decoded[$i] //= [decode_doc($table[$i])];
    return @{ $decoded[$i] };
}

# same_match of Perl's match $slot and table entry $i, each pair once.
sub same_entry {
    my ($slot, $i) = @_;
    return $compared{ refaddr($slot) . " $i" } //= same_match($slot, (entry($i))[0]);
}

# Paths parsed, by their text.
my %parsed;

sub check_path {
    (local $path, my @matches) = @_;
    $count{paths}++;
    $count{matches} += @matches;
    utf8::decode($path);
    return unless $whole;
    my @detail = (shown('document', $table[0]));
    my $steps = ($parsed{$path} //= parse_path($path)) or return fail('Perl cannot parse the path', @detail);
    my ($found, $ordered) = walk($whole, $steps);
    if (@$found != @matches) {
        return fail('Perl finds ' . @$found . ', the view ' . @matches,
            @detail, 'perl: ' . dump_value([map { $$_ } @$found]), map { shown('view', $table[$_]) } @matches);
    }
    for my $m (0 .. $#matches) {
        my ($r, $err) = entry($matches[$m]);
        next if $r;
        return fail("Perl cannot decode the view's document of match $m: $err", @detail, shown('view', $table[$matches[$m]]));
    }
    if ($ordered) {
        for my $m (0 .. $#matches) {
            my $why = same_entry($found->[$m], $matches[$m]) or next;
            return fail("match $m differs: $why", @detail, 'perl: ' . dump_value(${ $found->[$m] }),
                'view: ' . dump_value(${ (entry($matches[$m]))[0] }), shown('view', $table[$matches[$m]]));
        }
        return;
    }
    # In Perl's order, unknown here: each of the view's matches paired
    # with one of Perl's that is the same (a weak reference may be the
    # same as a strong one), all of them (augmenting paths).
    my @sig = map { signature($_) } @$found;
    my @same = map {
        my $i = $matches[$_];
        my $sig = signature((entry($i))[0]);
        [grep { $sig[$_] eq $sig && !same_entry($found->[$_], $i) } 0 .. $#$found]
    } 0 .. $#matches;
    my %paired;    # Perl's match => the view's
    for my $m (0 .. $#matches) {
        next if pair_match($m, \@same, \%paired, {});
        my $i = $matches[$m];
        my $sig = signature((entry($i))[0]);
        my ($alike) = grep { $sig[$_] eq $sig } 0 .. $#$found;
        my $why = !@{ $same[$m] } && defined $alike ? same_entry($found->[$alike], $i)
            : @{ $same[$m] } ? "the same as Perl's matches @{ $same[$m] }, each paired with another"
            : "none of Perl's matches is like it ($sig)";
        return fail("match $m differs: $why", @detail, 'perl: ' . dump_value([map { $$_ } @$found]),
            'view: ' . dump_value(${ (entry($i))[0] }), shown('view', $table[$i]));
    }
}

# Pairs the view's match $m with one of Perl's it is the same as
# ($same->[$m]), unpaired or whose view's match can be paired anew.
sub pair_match {
    my ($m, $same, $paired, $seen) = @_;
    for my $l (@{ $same->[$m] }) {
        next if $seen->{$l}++;
        if (!defined $paired->{$l} || pair_match($paired->{$l}, $same, $paired, $seen)) {
            $paired->{$l} = $m;
            return 1;
        }
    }
    return 0;
}

# ------------------------------------------------------- merge and split

sub check_merge {
    my ($flat, $out, @inputs) = @_;
    $count{merges}++;
    $count{inputs} += @inputs;
    my @detail = (shown('merged', $out), map { shown('input', $_) } @inputs);
    my ($merged, $err) = decode_doc($out);
    return fail("Perl cannot decode the merged document: $err", @detail) unless $merged;
    my (@roots, @slots);
    for my $i (0 .. $#inputs) {
        my ($root, $err) = decode_doc($inputs[$i]);
        return fail("Perl cannot decode input $i: $err", @detail) unless $root;
        push @roots, $root;
        push @slots, $flat ? (map { \$$root->[$_] } 0 .. $#$$root) : $root;
    }
    my $list = $$merged;
    if (reftype($list // '') ne 'ARRAY' || @$list != @slots) {
        return fail('the merged document is not an array of ' . @slots, @detail, 'merged: ' . dump_value($list));
    }
    # One comparison for all: what the inputs share with each other in the
    # merged document they do not share in Perl.
    my $ctx = context();
    for my $i (0 .. $#slots) {
        my $d = same($slots[$i], \$list->[$i], $ctx, "\$[$i]");
        next unless $d;
        fail("element $i differs: $d", @detail,
            'perl: ' . dump_value(${ $slots[$i] }), 'merged: ' . dump_value($list->[$i]));
        last;
    }
    break_cycles(map { $$_ } $merged, @roots);
}

sub check_split {
    my ($doc, @got) = split_chunks(@_);
    break_cycles(map { $$_ } $doc, @got) if $doc;
}

# check_split's comparison; returns what it decoded, to be freed.
sub split_chunks {
    my ($bytes, @chunks) = @_;
    $count{splits}++;
    $count{chunks} += @chunks;
    my @detail = (shown('document', $bytes));
    my ($doc, $err) = decode_doc($bytes);
    if (!$doc) {
        fail("Perl cannot decode the document: $err", @detail);
        return;
    }
    my $all = $$doc;
    my ($next, $reached, $before, @got) = (0, 0, {});
    my $fail = sub { fail(@_); return ($doc, @got) };
    for my $c (0 .. $#chunks) {
        my @where = (@detail, shown("chunk $c (from element $next)", $chunks[$c]));
        my ($chunk, $err) = decode_doc($chunks[$c]);
        return $fail->("Perl cannot decode chunk $c: $err", @where) unless $chunk;
        push @got, $chunk;
        my $list = $$chunk;
        if (reftype($list // '') ne 'ARRAY' || !@$list || $next + @$list > @$all) {
            return $fail->("chunk $c is not an array of the next elements", @where, 'chunk: ' . dump_value($list));
        }
        # A weak reference is written strong where nothing else in the
        # chunk holds its referent, or where that referent is copied in
        # (what elements before the chunk reach).
        reach($before, 0, map { \$all->[$_] } $reached .. $next - 1);
        $reached = $next;
        my $strong = reach({}, 1, map { \$all->[$_] } $next .. $next + $#$list);
        my $ctx = context(sub { $before->{ refaddr $_[0] } || !$strong->{ refaddr $_[0] } });
        for my $i (0 .. $#$list) {
            my $d = same(\$all->[$next + $i], \$list->[$i], $ctx, "\$[$i]");
            next unless $d;
            return $fail->("chunk $c element $i (element " . ($next + $i) . ") differs: $d", @where,
                'perl: ' . dump_value($all->[$next + $i]), 'chunk: ' . dump_value($list->[$i]));
        }
        $next += @$list;
    }
    fail("the chunks hold $next of " . @$all . ' elements', @detail) if $next != @$all;
    return ($doc, @got);
}

sub check_rootref {
    my ($bytes) = @_;
    $count{rootrefs}++;
    my ($doc, $err) = decode_doc($bytes);
    return fail("Perl cannot decode the document: $err", shown('document', $bytes)) unless $doc;
    my $root = $$doc;
    my $inside = reftype($root // '') eq 'ARRAY' && reach({}, 0, map { \$root->[$_] } 0 .. $#$root)->{ refaddr $root };
    fail('refused as referring to its root array, which nothing in it refers to',
        shown('document', $bytes), 'perl: ' . dump_value($root))
        unless $inside;
    break_cycles($$doc);
}

# Reads $n bytes of the input, or dies.
sub take {
    my ($n) = @_;
    my $buf = '';
    while (length $buf < $n) {
        my $got = read(STDIN, $buf, $n - length $buf, length $buf);
        die "view.pl: input cut short\n" unless $got;
    }
    return $buf;
}

sub number { return unpack 'N', take(4) }
sub field { return take(number()) }

# A count, and that many fields.
sub fields { return map { field() } 1 .. number() }

while (read(STDIN, my $kind, 1)) {
    if ($kind eq 'D') {
        break_cycles(map { $$_ } $whole, grep { $_ } map { $_->[0] } grep { $_ } @decoded) if $whole;
        %THAWED = ();
        ($label, my $doc) = (field(), field());
        (@table, @decoded, %compared) = ($doc);
        $count{docs}++;
        my $err;
        ($whole, $err) = decode_doc($doc);
        fail("Perl cannot decode the document: $err", shown('document', $doc)) unless $whole;
    } elsif ($kind eq 'B') {
        push @table, field();
    } elsif ($kind eq 'P') {
        my $text = field();
        check_path($text, unpack 'N*', take(4 * number()));
    } else {
        $label = field();
        if ($kind eq 'M') { check_merge(field(), field(), fields()) }
        elsif ($kind eq 'S') { check_split(field(), fields()) }
        elsif ($kind eq 'R') { check_rootref(field()) }
        else { die "view.pl: unknown record '$kind'\n" }
    }
}
print 'summary ', join(' ', map { "$_=$count{$_}" } sort keys %count), "\n";
