fn main() {
    let d: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let t = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            let mut j = serde_json::Value::Null;
            for _ in 0..d {
                j = serde_json::Value::Array(vec![j]);
            }
            drop(j);
        })
        .unwrap();
    println!("{d} {:?}", t.join().is_ok());
}
