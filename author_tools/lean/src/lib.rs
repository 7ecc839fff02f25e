//! The sereal library built with `default-features = false, features =
//! ["zstd"]`: what it keeps, and the errors for what it leaves out.

#[cfg(test)]
mod tests {
    use sereal::{decode, encode, encode_with, Compression, EncoderOptions, ErrorKind, Ref, Value};

    fn unhex(h: &str) -> Vec<u8> {
        (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn a_shared_graph_round_trips_raw_and_with_zstd() {
        let shared = Ref::array(vec![Value::from("a"), Value::from("b")]);
        let root = Value::array([
            Value::Ref(shared.clone()),
            Value::Ref(shared),
            Value::from(7),
        ]);
        for c in [Compression::None, Compression::Zstd] {
            let opts = EncoderOptions::new().compress(c).compress_threshold(0);
            let bytes = encode_with(&root, &opts).unwrap();
            let back = decode(&bytes).unwrap();
            assert_eq!(back, root, "{c:?}");
            let (Some(Value::Ref(a)), Some(Value::Ref(b))) = (back.at(0), back.at(1)) else {
                panic!("not references: {back:?}");
            };
            assert!(Ref::ptr_eq(&a, &b), "{c:?}: sharing lost");
        }
        assert_eq!(
            decode(&encode(&Value::from("x")).unwrap()).unwrap(),
            Value::from("x")
        );
    }

    #[test]
    fn codecs_left_out_are_errors_that_name_their_feature() {
        assert!(Compression::Zstd.is_available());
        assert!(!Compression::Snappy.is_available());
        assert!(!Compression::Zlib.is_available());
        // Perl: Sereal::Encoder->new({compress => SRL_SNAPPY, compress_threshold => 0})
        //         ->encode([("abcdef") x 8]), and the same with SRL_ZLIB
        for (hex, feature) in [
            ("3df3726c25000d391c4866616263646566c20700", "snappy"),
            (
                "3df3726c3500399d00789c95c5370100000c02307bb551967f0968e0cae5413933057e9b1621",
                "zlib",
            ),
        ] {
            let err = decode(&unhex(hex)).unwrap_err();
            assert_eq!(err.kind(), &ErrorKind::MissingFeature(feature), "{err}");
            assert!(
                err.to_string()
                    .contains(&format!("`{feature}` cargo feature")),
                "{err}"
            );
        }
        for c in [Compression::Snappy, Compression::Zlib] {
            let err =
                encode_with(&Value::from("x"), &EncoderOptions::new().compress(c)).unwrap_err();
            assert_eq!(
                err.kind(),
                &ErrorKind::MissingFeature(c.feature().unwrap()),
                "{err}"
            );
        }
    }
}
