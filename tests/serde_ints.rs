//! Integers through serde at every varint width: the values that come
//! back, the range errors of narrow types, and cut documents, each against
//! what the general path (`from_slice::<Value>`, `decode`) says.

use sereal::{decode, from_slice, to_vec, Value};

const EDGES: [i128; 22] = [
    0,
    1,
    15,
    16,
    127,
    128,
    255,
    256,
    16_383,
    16_384,
    2_097_151,
    2_097_152,
    u32::MAX as i128,
    u64::MAX as i128,
    -1,
    -16,
    -17,
    -64,
    -65,
    -8_192,
    -8_193,
    i64::MIN as i128,
];

fn doc(n: i128) -> Vec<u8> {
    if n < 0 {
        to_vec(&(n as i64)).unwrap()
    } else {
        to_vec(&(n as u64)).unwrap()
    }
}

/// What a narrow type makes of `n`: the value, or an error at the tag.
fn narrow<T>(d: &[u8], n: i128)
where
    T: serde::de::DeserializeOwned + TryFrom<i128> + PartialEq + std::fmt::Debug,
{
    let got = from_slice::<T>(d);
    match T::try_from(n) {
        Ok(v) => assert_eq!(got.unwrap(), v, "{n}"),
        Err(_) => {
            let e = got.unwrap_err();
            assert_eq!(e.offset(), Some(6), "{n}: {e}");
        }
    }
}

#[test]
fn integers_of_every_width_read_back() {
    for n in EDGES {
        let d = doc(n);
        let value = decode(&d).unwrap().into_value();
        assert_eq!(from_slice::<Value>(&d).unwrap(), value, "{n}");
        assert_eq!(from_slice::<i128>(&d).unwrap(), n, "{n}");
        narrow::<u8>(&d, n);
        narrow::<i8>(&d, n);
        narrow::<u16>(&d, n);
        narrow::<i32>(&d, n);
        narrow::<u64>(&d, n);
        narrow::<i64>(&d, n);
        // In a sequence (the inlined element path) and after a string.
        let seq = to_vec(&vec![value.clone(), value.clone(), Value::from("x")]).unwrap();
        let (a, b, s) = from_slice::<(i128, i128, String)>(&seq).unwrap();
        assert_eq!((a, b, s.as_str()), (n, n, "x"), "{n}");
    }
}

#[test]
fn cut_integers_fail_as_the_general_path_does() {
    for n in EDGES {
        let d = to_vec(&vec![Value::from(7), decode(&doc(n)).unwrap().into_value()]).unwrap();
        for cut in 7..d.len() {
            let general = from_slice::<Value>(&d[..cut]).unwrap_err();
            let typed = from_slice::<Vec<i128>>(&d[..cut]).unwrap_err();
            assert_eq!(typed.kind(), general.kind(), "{n} cut at {cut}: {typed}");
            assert_eq!(
                typed.offset(),
                general.offset(),
                "{n} cut at {cut}: {typed}"
            );
            assert_eq!(decode(&d[..cut]).unwrap_err().offset(), general.offset());
        }
    }
}

/// 128-bit integers are written as Sereal's 64-bit integers when they fit
/// (the same bytes as the `i64`/`u64` of that value) and refused otherwise.
#[test]
fn wide_integers_write_when_they_fit() {
    for n in EDGES {
        let want = doc(n);
        assert_eq!(to_vec(&n).unwrap(), want, "i128 {n}");
        if let Ok(u) = u128::try_from(n) {
            assert_eq!(to_vec(&u).unwrap(), want, "u128 {n}");
        }
        assert_eq!(from_slice::<i128>(&to_vec(&n).unwrap()).unwrap(), n);
    }
    for n in [
        i128::from(u64::MAX) + 1,
        i128::from(i64::MIN) - 1,
        i128::MAX,
        i128::MIN,
    ] {
        let e = to_vec(&n).unwrap_err().to_string();
        assert!(e.contains("does not fit in Sereal's 64 bits"), "{n}: {e}");
    }
    for n in [u128::from(u64::MAX) + 1, u128::MAX] {
        let e = to_vec(&n).unwrap_err().to_string();
        assert!(e.contains("does not fit in Sereal's 64 bits"), "{n}: {e}");
    }
    // Inside a structure and as a map key (keys are text, any width).
    let v = to_vec(&(
        vec![1i128, -2],
        std::collections::BTreeMap::from([(u128::MAX, 1u128)]),
    ))
    .unwrap();
    let back: (Vec<i64>, std::collections::BTreeMap<String, u64>) = from_slice(&v).unwrap();
    assert_eq!(back.0, [1, -2]);
    assert_eq!(back.1[&u128::MAX.to_string()], 1);
    assert_eq!(decode(&v).unwrap(), from_slice::<Value>(&v).unwrap());
}
