//! The view, merge and split against Perl's own Sereal.

use sereal::view::{Kind, View};

// ------------------------------------------------------------- regressions
//
// What the oracle found, in Perl's own bytes, with what Perl reads there;
// these need no Perl.

/// Perl writes `$x = \$x` as a tracked `REFP` that names itself, which
/// the decoder reads (it registers an item when it reads its tag); the
/// view took the offset for one out of range.
#[test]
fn a_reference_to_itself_reads_as_the_decoder_reads_it() {
    // Perl: my $x; $x = \$x; encode($x), and encode(\$x)
    for bytes in [
        &b"=\xF3rl\x05\x00\xa9\x01"[..],
        b"=\xF3rl\x03\x00\x28\xa9\x02",
    ] {
        let view = View::new(bytes).unwrap();
        view.check().unwrap();
        assert_eq!(view.root().kind().unwrap(), Kind::Reference);
        assert!(view.select("$[*]").unwrap().is_empty());
        let whole = sereal::decode(bytes).unwrap();
        assert!(view.root().decode().unwrap().perl_eq(&whole));
        let alone = sereal::decode(&view.root().to_document().unwrap()).unwrap();
        assert!(alone.perl_eq(&whole));
    }
}

/// A path may reach, through a `REFP`, a value whose bytes are inside a
/// reference to a scalar; when that value refers outside itself it is
/// found in the decoded whole document, whose walk to it went only
/// through arrays and hashes and did not find it.
#[test]
fn an_item_inside_a_scalar_reference_is_found_in_the_whole_document() {
    // Perl: my $a = []; push @$a, $a; my $h = {k => $a}; encode([\$h, $a])
    let bytes = b"=\xF3rl\x05\x00\x42\x28\x51\x61k\x28\xab\x01\x29\x07\x29\x07";
    let view = View::new(bytes).unwrap();
    let item = view.select("$[1][0]").unwrap()[0]; // $a->[0], a reference to $a
    let whole = sereal::decode(bytes).unwrap();
    let expected = whole.at(1).unwrap().at(0).unwrap();
    assert!(item.decode().unwrap().perl_eq(&expected));
    let alone = sereal::decode(&item.to_document().unwrap()).unwrap();
    assert!(alone.perl_eq(&expected));
}

/// A copy writes the string a `COPY` outside it names once, where it is
/// first needed; a tracked `COPY` (an aliased scalar) is written as a
/// tracked string, which no later `COPY` may name: a decoder reads a
/// `COPY` by reading its target in place, tracking that scalar there
/// instead, and an `ALIAS` of the first one would alias the second.
#[test]
fn a_copy_never_names_a_tracked_string() {
    // Perl: my $s = "dup" x 10; my $x = $s; encode(sub { \@_ }->($s, $x,
    // \"$s", $x, \$x), {dedupe_strings => 1}): the string, $x (a COPY of
    // it), a reference to another COPY, $x again, a reference to $x
    let bytes = b"=\xF3rl\x05\x00\x45\x7edupdupdupdupdupdupdupdupdupdup\
                  \xaf\x02\x28\x2f\x02\x2e\x21\x29\x21";
    let whole = sereal::decode(bytes).unwrap();
    let mut next = 0;
    // chunks after the first copy the string in
    for chunk in Splitter::new(View::new(bytes).unwrap(), 47).unwrap() {
        let chunk = sereal::decode(&chunk.unwrap()).unwrap();
        let n = chunk.as_array().unwrap().len();
        let slice = (next..next + n).map(|i| whole.at(i).unwrap());
        let slice = Value::array(slice.collect::<Vec<_>>());
        assert!(
            chunk.perl_eq(&slice),
            "from {next}: {:?}, {slice:?}",
            *chunk
        );
        next += n;
    }
    assert_eq!(next, 5);
}

/// An object may bless an item written before it (a `REFP` after the
/// class): a reference to that item copied into a later chunk is written
/// as an object of that class.
#[test]
fn an_item_blessed_after_it_is_written_keeps_its_class_in_a_later_chunk() {
    // Perl's corpus: my @a = ("foo"); [$a[0], bless(\$a[0], 'BlessedArrayCheck'), \$a[0]]
    let bytes = b"=\xF3rl\x04\x00\x43\xe3foo\x2c\x71BlessedArrayCheck\x29\x02\x29\x02";
    let chunks: Vec<Vec<u8>> = Splitter::new(View::new(bytes).unwrap(), 1)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(chunks.len(), 3);
    for chunk in &chunks[1..] {
        let object = sereal::decode(chunk)
            .unwrap()
            .at(0)
            .unwrap()
            .node()
            .unwrap();
        assert_eq!(object.class().unwrap().to_string(), "BlessedArrayCheck");
    }
}

/// A weak reference to a scalar that an `ALIAS` makes an element of the
/// array stays weak in a chunk that holds both: the alias holds the
/// scalar.
#[test]
fn a_weak_reference_to_an_aliased_scalar_stays_weak_in_a_chunk() {
    // Perl's corpus, "weak scalar cross": [$x, $y] with $x a weak
    // reference to $y, $y one to $x, and $y the array's second element
    let bytes = b"=srl\x01\x00\x42\xb0\x28\xb0\x29\x07\x2e\x09";
    let whole = sereal::decode(bytes).unwrap();
    let mut chunks = Splitter::new(View::new(bytes).unwrap(), 1000).unwrap();
    let chunk = sereal::decode(&chunks.next().unwrap().unwrap()).unwrap();
    // the first element is the scalar $x (tracked), holding a weak reference
    let x = chunk.at(0).unwrap().node().unwrap();
    assert!(
        matches!(&*x.body(), Body::Scalar(Value::Weak(_))),
        "{:?}",
        *chunk
    );
    assert!(chunk.perl_eq(&whole));
}

/// A chunk that holds an item of an earlier chunk as an element (an
/// `ALIAS`, copied in as it is: an element carries no class) and refers
/// to it writes the item's class where it refers to it.
#[test]
fn an_aliased_object_copied_into_a_chunk_keeps_its_class() {
    // Perl: my $c = "x" x 20; my $obj = bless \$c, "C1";
    // encode(sub { \@_ }->($obj, $c, \$c)): the object, $c, \$c
    let bytes = b"=\xF3rl\x05\x00\x43\x2c\x62C1\x28\xf4xxxxxxxxxxxxxxxxxxxx\x2e\x07\x29\x07";
    let chunks: Vec<Vec<u8>> = Splitter::new(View::new(bytes).unwrap(), 43)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(chunks.len(), 2);
    // the second chunk is [$c, \$c]
    let chunk = sereal::decode(&chunks[1]).unwrap();
    let object = chunk.at(1).unwrap().node().unwrap();
    assert_eq!(object.class().map(|c| c.to_string()).as_deref(), Some("C1"));
    // Perl: my $c; $c = \$c; bless $c, "C1"; encode(sub { \@_ }->(\$c,
    // $c)): the second, $c, refers to itself, where its class is written
    let bytes = b"=\xF3rl\x05\x00\x42\x2c\x62C1\x28\xa9\x07\x2e\x07";
    let mut chunks = Splitter::new(View::new(bytes).unwrap(), 1).unwrap().skip(1);
    let chunk = sereal::decode(&chunks.next().unwrap().unwrap()).unwrap();
    let object = chunk.at(0).unwrap().node().unwrap();
    assert_eq!(object.class().map(|c| c.to_string()).as_deref(), Some("C1"));
}

/// A second reference to an object a FREEZE callback wrote (a `REFP` to
/// what it froze), copied into a later chunk, is written as that object
/// again: `OBJECT_FREEZE`, for THAW to read.
#[test]
fn a_frozen_object_copied_into_a_chunk_stays_frozen() {
    // Perl's corpus, "frozen object shared" (freeze_callbacks): a Frozen
    // object twice, and another
    let bytes = b"=\xF3rl\x05\x00\x43\x32\x66Frozen\x28\xab\x02\x05\x65extra\x29\x0b\
                  \x33\x03\x28\x2b\x02\x06\x65extra";
    let chunks: Vec<Vec<u8>> = Splitter::new(View::new(bytes).unwrap(), 1)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(chunks.len(), 3);
    for chunk in &chunks {
        let object = sereal::decode(chunk)
            .unwrap()
            .at(0)
            .unwrap()
            .node()
            .unwrap();
        assert_eq!(object.class().unwrap().to_string(), "Frozen");
        assert!(
            matches!(&*object.body(), Body::Frozen(_)),
            "{:?}",
            *object.body()
        );
    }
}
