//! Typed targets (sequences, maps, structs) read the long forms of arrays
//! and hashes (`REFN ARRAY n`, `REFN HASH n`: more than 15 elements) as the
//! general path does: the same values, and for a damaged document the same
//! error at the same offset as `from_slice::<Value>` and `decode` report.

use serde::Deserialize;
use sereal::{decode, from_slice, from_slice_with, to_vec, DecoderOptions, Error, Value};
use std::collections::BTreeMap;
use std::fmt::Debug;

#[derive(Deserialize, serde::Serialize, Debug, PartialEq)]
struct Row {
    id: u32,
    cells: Vec<u32>,
    tags: BTreeMap<String, u32>,
}

fn ints(n: u32) -> Vec<u32> {
    (0..n).map(|i| i * 37).collect()
}

fn map(n: u32) -> BTreeMap<String, u32> {
    (0..n).map(|i| (format!("k{i:02}"), i)).collect()
}

fn rows() -> Vec<Row> {
    (0..17)
        .map(|id| Row {
            id,
            cells: ints(16 + id % 2),
            tags: map(20),
        })
        .collect()
}

/// The error's kind and offset, as the general path reports them.
fn general(doc: &[u8], opts: &DecoderOptions) -> Option<(String, Option<usize>)> {
    let e = from_slice_with::<Value>(doc, opts.clone()).err()?;
    let d = sereal::Decoder::new(opts.clone()).decode(doc).err();
    let d = d.expect("decode refuses what serde refuses");
    assert_eq!((d.kind(), d.offset()), (e.kind(), e.offset()), "{e}");
    Some((format!("{:?}", e.kind()), e.offset()))
}

fn same<T>(doc: &[u8], opts: &DecoderOptions, what: &str) -> Result<T, Error>
where
    T: for<'de> Deserialize<'de> + Debug,
{
    let typed = from_slice_with::<T>(doc, opts.clone());
    match (&typed, general(doc, opts)) {
        (Ok(_), None) => {}
        (Err(e), Some((kind, offset))) => {
            assert_eq!(format!("{:?}", e.kind()), kind, "{what}: {e}");
            assert_eq!(e.offset(), offset, "{what}: {e}");
        }
        (t, g) => panic!("{what}: typed {t:?}, general {g:?}"),
    }
    typed
}

#[test]
fn long_forms_read_as_written() {
    let v = ints(100);
    let doc = to_vec(&v).unwrap();
    // REFN ARRAY 100 at the root
    assert_eq!(&doc[6..9], &[0x28, 0x2b, 100]);
    assert_eq!(from_slice::<Vec<u32>>(&doc).unwrap(), v);
    let m = map(40);
    let doc = to_vec(&m).unwrap();
    assert_eq!(&doc[6..9], &[0x28, 0x2a, 40]);
    assert_eq!(from_slice::<BTreeMap<String, u32>>(&doc).unwrap(), m);
    let r = rows();
    let doc = to_vec(&r).unwrap();
    assert_eq!(from_slice::<Vec<Row>>(&doc).unwrap(), r);
    // A fixed-size tuple of a long array: the rest is skipped.
    let doc = to_vec(&ints(30)).unwrap();
    assert_eq!(from_slice::<(u32, u32)>(&doc).unwrap(), (0, 37));
    assert!(decode(&doc).is_ok());
}

#[test]
fn damaged_long_forms_fail_where_the_general_path_does() {
    let opts = DecoderOptions::new();
    let docs = [
        to_vec(&ints(100)).unwrap(),
        to_vec(&map(40)).unwrap(),
        to_vec(&rows()[..3]).unwrap(),
    ];
    for (i, doc) in docs.iter().enumerate() {
        for cut in 0..doc.len() {
            let what = format!("doc {i} cut at {cut}");
            let r = match i {
                0 => same::<Vec<u32>>(&doc[..cut], &opts, &what).map(drop),
                1 => same::<BTreeMap<String, u32>>(&doc[..cut], &opts, &what).map(drop),
                _ => same::<Vec<Row>>(&doc[..cut], &opts, &what).map(drop),
            };
            let e = r.expect_err(&what);
            // Cut inside the elements of the root's count (100 ints of at
            // least one byte, 40 pairs of at least two): at the count.
            if i < 2 && (9..49).contains(&cut) {
                assert_eq!(e.offset(), Some(8), "{what}: {e}");
            }
        }
    }
}

#[test]
fn limits_apply_to_the_long_forms_of_typed_targets() {
    let doc = to_vec(&rows()).unwrap();
    for (opts, limited) in [
        (DecoderOptions::new().max_num_array_entries(17), false),
        (DecoderOptions::new().max_num_array_entries(16), true),
        (DecoderOptions::new().max_num_hash_entries(20), false),
        (DecoderOptions::new().max_num_hash_entries(19), true),
        (DecoderOptions::new().max_recursion_depth(3), false),
        (DecoderOptions::new().max_recursion_depth(2), true),
    ] {
        let what = format!("{opts:?}");
        let r = same::<Vec<Row>>(&doc, &opts, &what);
        assert_eq!(r.is_err(), limited, "{what}: {r:?}");
    }
}
