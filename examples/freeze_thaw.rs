//! Objects with FREEZE and THAW: a class that serializes itself as a compact
//! list, the way a Perl class with FREEZE/THAW methods does.
//!
//! ```sh
//! cargo run --example freeze_thaw
//! ```

use sereal::{json, Decoder, Encoder, EncoderOptions, Ref, Value};

fn point(x: i64, y: i64) -> Value {
    Value::Ref(Ref::hash([("x", x), ("y", y)].into_iter().collect()).blessed("Point"))
}

fn main() -> Result<(), sereal::Error> {
    let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true))?;
    // FREEZE: the object -> the values to write (here "x,y" as one string)
    enc.on_freeze("Point", |p| {
        let h = p.as_hash().expect("a Point is a hash");
        let coord = |k| h.get(k).and_then(Value::as_i64).unwrap_or(0);
        Ok(vec![Value::from(format!("{},{}", coord("x"), coord("y")))])
    });
    let path = Value::array([point(0, 0), point(3, 4)]);
    let bytes = enc.encode(&path)?;
    println!("{} bytes", bytes.len());

    // THAW: the class and the FREEZE values -> the object
    let mut dec = Decoder::default();
    dec.on_thaw("Point", |_class, vals| {
        let text = vals
            .first()
            .and_then(Value::as_str)
            .unwrap_or("0,0")
            .to_owned();
        let (x, y) = text.split_once(',').unwrap_or(("0", "0"));
        Ok(point(x.parse().unwrap_or(0), y.parse().unwrap_or(0)))
    });
    let back = dec.decode(&bytes)?;
    assert_eq!(back, path);
    println!("thawed: {back:?}");

    // Without a THAW handler the objects stay frozen, and still encode back
    // to the same bytes; lossless JSON shows them as "frozen" nodes.
    let frozen = Decoder::default().decode(&bytes)?;
    println!("frozen: {frozen:?}");
    println!("lossless JSON: {}", json::to_json(&frozen, true)?);
    assert_eq!(Encoder::new(EncoderOptions::new())?.encode(&frozen)?, bytes);
    Ok(())
}
