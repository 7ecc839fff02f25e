//! THAW handlers on arbitrary documents, in both orders: an option byte
//! chooses what the handlers return (an object, one of their values, an
//! array of them, a plain scalar, or a failure) and the allow-list options;
//! the document follows. Decoding with `thaw_lifo` and without must both
//! succeed or both fail, never panic; what decodes re-encodes to bytes that
//! decode.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sereal::{Decoder, DecoderOptions, Error, ErrorKind, Key, Ref, Value};

/// The classes handlers are registered for: the corpus's FREEZE class and
/// short names the fuzzer finds easily.
const CLASSES: [&str; 4] = ["Frozen", "A", "P", "Point"];

fn thaw(mode: u8, class: &Key, mut vals: Vec<Value>) -> sereal::Result<Value> {
    Ok(match mode % 6 {
        0 => {
            let v = vals.drain(..).next().unwrap_or_default();
            Value::Ref(Ref::hash([("v", v)].into_iter().collect()).blessed(class.clone()))
        }
        1 => vals.pop().unwrap_or_default(),
        2 => Value::array(vals),
        3 => return Err(Error::new(ErrorKind::Callback("refused".into()))),
        4 => Value::from(1),
        _ => Value::Ref(Ref::array(vals).blessed(class.clone())),
    })
}

fn decoder(opt: u8, lifo: bool) -> Decoder {
    let mut o = DecoderOptions::new()
        .max_uncompressed_size(16 << 20)
        .thaw_lifo(lifo)
        .thaw_deny_raw(opt & 0x40 != 0);
    if opt & 0x80 != 0 {
        o = o.thaw_allow_classes(["A", "Frozen"]);
    }
    let mut dec = Decoder::new(o);
    let mode = opt & 7;
    for class in CLASSES {
        dec.on_thaw(class, move |class, vals| thaw(mode, class, vals));
    }
    dec
}

fuzz_target!(|data: &[u8]| {
    let Some((&opt, doc)) = data.split_first() else {
        return;
    };
    let lifo = decoder(opt, true).decode(doc);
    let plain = decoder(opt, false).decode(doc);
    assert_eq!(
        lifo.is_ok(),
        plain.is_ok(),
        "thaw_lifo {:?} and the default order {:?} disagree",
        lifo.as_ref().err(),
        plain.as_ref().err()
    );
    for doc in [lifo, plain].into_iter().flatten() {
        if let Ok(bytes) = sereal::encode(&doc) {
            let back = sereal::decode(&bytes).expect("a re-encoding decodes");
            back.into_value().dismantle();
        }
        doc.into_value().dismantle();
    }
});
