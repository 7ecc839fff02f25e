use super::*;

fn kind_at<T: std::fmt::Debug>(r: Result<T>) -> (ErrorKind, Option<usize>) {
    let e = r.unwrap_err();
    (e.kind().clone(), e.offset())
}

#[test]
fn counts_are_checked_against_their_limit_and_the_bytes_left() {
    // 3 items of at least 2 bytes each, 6 bytes after the count
    let body = [0x03, 0, 0, 0, 0, 0, 0];
    assert_eq!(Cursor::new(&body[..], 1).count(3, "hash", 2).unwrap(), 3);
    let (k, at) = kind_at(Cursor::new(&body[..], 1).count(2, "hash", 2));
    assert!(matches!(k, ErrorKind::LimitExceeded(m) if m == "hash of 3 entries (limit 2)"));
    assert_eq!(at, Some(0));
    assert_eq!(
        kind_at(Cursor::new(&body[..6], 1).count(0, "hash", 2)),
        (ErrorKind::Truncated, Some(0))
    );
    // a count of 2^63 items of one byte is refused, not overflowed
    let huge = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01];
    assert_eq!(
        kind_at(Cursor::new(&huge[..], 1).count(0, "array", 1)),
        (ErrorKind::Truncated, Some(0))
    );
}

#[test]
fn varints_cut_short_and_malformed_ones_differ() {
    let mut c = Cursor::new(&[0x80, 0x80][..], 1);
    assert!(c.varint_cut());
    assert_eq!(kind_at(c.varint()), (ErrorKind::Truncated, Some(0)));
    let long = [0xff; 11];
    let mut c = Cursor::new(&long[..], 1);
    assert!(!c.varint_cut());
    assert_eq!(kind_at(c.varint()), (ErrorKind::BadVarint, Some(0)));
    assert_eq!(c.pos(), 0, "a failed read does not move");
}

#[test]
fn errors_are_placed_from_the_base() {
    let mut c = Cursor::new(&[0x01][..], 1).placed_at(6, true);
    c.byte().unwrap();
    let e = c.byte().unwrap_err();
    assert_eq!(e.offset(), Some(7));
    assert_eq!(
        e.to_string(),
        "unexpected end of input at decompressed body offset 7"
    );
    let e = c.place(Error::new(ErrorKind::Invalid("a visitor's".into())), 0);
    assert_eq!(e.offset(), Some(6));
    let placed = Error::at(ErrorKind::TrailingData, 2);
    assert_eq!(
        c.place(placed, 0).offset(),
        Some(2),
        "a placed error keeps its place"
    );
}

#[test]
fn targets_name_earlier_items_only() {
    let body = [0x01, 0x02, 0x03, 0x04];
    let c = Cursor::new(&body[..], 1);
    assert_eq!(c.target(1, 2, "COPY").unwrap(), 0);
    assert_eq!(c.target(2, 2, "COPY").unwrap(), 1);
    for off in [0, 3, 4, 99, u64::MAX] {
        assert_eq!(
            kind_at(c.target(off, 2, "COPY")),
            (ErrorKind::BadOffset(off, "COPY"), Some(2)),
            "offset {off}"
        );
    }
    // protocol 1: offsets count from the document's start
    let c = Cursor::new(&body[..], 6);
    assert_eq!(c.target(6, 1, "REFP").unwrap(), 0);
    assert!(c.target(5, 1, "REFP").is_err());
    assert_eq!(c.position_of(10), Some(4));
    assert_eq!(c.position_of(11), None);
}

#[test]
fn depth_is_limited_and_zero_means_none() {
    let mut c = Cursor::new(&[0u8][..], 1).max_depth(2);
    c.enter().unwrap();
    c.enter().unwrap();
    assert_eq!(kind_at(c.enter()), (ErrorKind::DepthExceeded(2), Some(0)));
    // a refused level is not entered
    assert_eq!(c.depth(), 2);
    c.set_depth(1);
    c.enter().unwrap();
    let mut free = Cursor::new(&[0u8][..], 1).max_depth(0);
    for _ in 0..100_000 {
        free.enter().unwrap();
    }
    assert_eq!(free.depth(), 100_000);
}

#[test]
fn a_position_past_the_end_reads_as_the_end() {
    let mut c = Cursor::new(&[0x01][..], 1);
    c.set_pos(5);
    assert_eq!(c.left(), 0);
    assert!(c.varint_cut());
    assert_eq!(kind_at(c.varint()), (ErrorKind::Truncated, Some(5)));
    assert_eq!(kind_at(c.byte()), (ErrorKind::Truncated, Some(5)));
    assert_eq!(kind_at(c.take(0)), (ErrorKind::Truncated, Some(5)));
    assert_eq!(
        kind_at(c.count(0, "array", 1)),
        (ErrorKind::Truncated, Some(5))
    );
    c.leave();
    assert_eq!(c.depth(), 0);
}

#[test]
fn reads_take_what_is_there() {
    let body = [0xac, 0x02, b'a', b'b', b'c', 1, 2, 3, 4];
    let mut c = Cursor::new(&body[..], 1);
    assert_eq!(c.varint().unwrap(), 300);
    assert_eq!(c.slice(3).unwrap(), b"abc");
    assert_eq!(c.fixed::<4>().unwrap(), [1, 2, 3, 4]);
    assert_eq!(c.left(), 0);
    assert_eq!(kind_at(c.take(1)), (ErrorKind::Truncated, Some(9)));
    assert_eq!(
        kind_at(c.slice(usize::MAX)),
        (ErrorKind::Truncated, Some(9))
    );
    let mut c = Cursor::new(std::borrow::Cow::from(body.to_vec()), 1);
    c.set_pos(2);
    assert_eq!(c.take(3).unwrap(), 2..5);
    assert_eq!(c.offset_of(c.pos()), 6);
}
