//! THAW handlers on arbitrary documents, in every order: an option byte
//! chooses what the handlers return (an object, one of their values, an
//! array of them, a plain scalar, or a failure) and the allow-list options;
//! the document follows. No order panics; a document one of Perl's orders
//! refuses for anything but a callback (its bytes) every order refuses;
//! what decodes re-encodes to bytes that decode.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sereal::{Decoder, DecoderOptions, Error, ErrorKind, Key, Ref, ThawOrder, Value};

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

fn decoder(opt: u8, order: ThawOrder) -> Decoder {
    let mut o = DecoderOptions::new()
        .max_uncompressed_size(16 << 20)
        .thaw_order(order)
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
    let decoded: Vec<_> = [ThawOrder::Immediate, ThawOrder::Perl5004, ThawOrder::Perl5003]
        .map(|order| decoder(opt, order).decode(doc))
        .into();
    let malformed = |r: &sereal::Result<_>| {
        r.as_ref()
            .is_err_and(|e| !matches!(e.kind(), ErrorKind::Callback(_)))
    };
    // Perl's orders read the whole document before any THAW runs, so what
    // they refuse for anything but a callback is in its bytes, which the
    // immediate order (whose THAW results can also be refused) reads too.
    if decoded[1..].iter().any(malformed) {
        assert!(
            decoded.iter().all(|r| r.is_err()),
            "refused in one order and not another: {:?}",
            decoded.iter().map(|r| r.as_ref().err()).collect::<Vec<_>>()
        );
    }
    // Each document is dropped whole: a THAW may drop the values it was
    // given, so cycles among them can be out of the root's reach, and only
    // the document's own care frees those.
    for doc in decoded.into_iter().flatten() {
        if let Ok(bytes) = sereal::encode(&doc) {
            drop(sereal::decode(&bytes).expect("a re-encoding decodes"));
        }
        drop(doc);
    }
});
