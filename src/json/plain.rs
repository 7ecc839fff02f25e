//! Plain JSON: a tree for people, and a fresh tree read from one.

use super::*;

#[derive(Default)]
pub(super) struct Plain {
    /// Nodes being written (a meeting of one of them is a cycle).
    open: HashMap<usize, ()>,
    count: usize,
    /// Arrays and objects being written.
    depth: usize,
}

impl Plain {
    pub(super) fn value(&mut self, v: &Value) -> Result<Json> {
        self.count += 1;
        if self.count > PLAIN_MAX_VALUES {
            return Err(Error::new(ErrorKind::LimitExceeded(format!(
                "plain JSON of this document would hold more than {PLAIN_MAX_VALUES} values (shared nodes are written out at each meeting); use lossless JSON"
            ))));
        }
        Ok(match v {
            Value::Undef | Value::CanonicalUndef => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::True => Json::Bool(true),
            Value::False => Json::Bool(false),
            Value::Int(i) => Json::from(*i),
            Value::UInt(u) => Json::from(*u),
            Value::Float(f) => float_plain(f64::from(*f)),
            Value::Double(d) => float_plain(*d),
            Value::LongDouble(b) => float_plain(long_double_to_f64(b)),
            Value::Float128(b) => float_plain(float128_to_f64(b)),
            Value::Bytes(s) => Json::String(match std::str::from_utf8(s.as_bytes()) {
                Ok(t) => t.to_owned(),
                Err(_) => latin1_to_string(s.as_bytes()),
            }),
            Value::Utf8(s) => Json::String(String::from_utf8_lossy(s.as_bytes()).into_owned()),
            Value::Ref(r) | Value::Alias(r) => self.node(r)?,
            Value::Weak(w) => match w.upgrade() {
                Some(r) => self.node(&r)?,
                None => Json::Null,
            },
            Value::Foreign(x) => {
                return Err(Error::new(ErrorKind::Unsupported(format!(
                    "a value of type {} cannot be written as JSON",
                    x.type_name()
                ))))
            }
        })
    }

    fn node(&mut self, r: &Ref) -> Result<Json> {
        let addr = r.addr();
        if self.open.contains_key(&addr) {
            return Ok(Json::Null);
        }
        self.open.insert(addr, ());
        let out = crate::stack::deeper(|| {
            let body = r.try_body()?;
            let nests = matches!(&*body, Body::Array(_) | Body::Frozen(_) | Body::Hash(_));
            if nests && self.depth == PLAIN_MAX_DEPTH {
                return Err(Error::new(ErrorKind::LimitExceeded(format!(
                    "plain JSON nests at most {PLAIN_MAX_DEPTH} arrays and objects; use lossless JSON"
                ))));
            }
            self.depth += usize::from(nests);
            let out = self.body(&body);
            self.depth -= usize::from(nests);
            out
        });
        self.open.remove(&addr);
        out
    }

    fn body(&mut self, body: &Body) -> Result<Json> {
        Ok(match body {
            Body::Scalar(v) => self.value(v)?,
            Body::Array(a) | Body::Frozen(a) => Json::Array(
                a.iter()
                    .map(|v| self.value(v))
                    .collect::<Result<Vec<_>>>()?,
            ),
            Body::Hash(h) => {
                // keys sorted, whatever order serde_json's maps keep
                let mut entries: Vec<(String, &Value)> = h
                    .iter()
                    .map(|(k, v)| {
                        let key = match k.as_str() {
                            Some(s) => s.to_owned(),
                            None if !k.is_utf8() => latin1_to_string(k.as_bytes()),
                            None => String::from_utf8_lossy(k.as_bytes()).into_owned(),
                        };
                        (key, v)
                    })
                    .collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                let mut m = Map::new();
                for (key, v) in entries {
                    m.insert(key, self.value(v)?);
                }
                Json::Object(m)
            }
            Body::Regexp(re) => Json::String(format!(
                "(?^{}:{})",
                String::from_utf8_lossy(re.flags.as_bytes()),
                String::from_utf8_lossy(re.pattern.as_bytes())
            )),
        })
    }
}

/// A float as a JSON number; the non-finite ones as Perl prints them.
fn float_plain(d: f64) -> Json {
    match Number::from_f64(d) {
        Some(n) => Json::Number(n),
        None if d.is_nan() => Json::String("NaN".into()),
        None if d > 0.0 => Json::String("Inf".into()),
        None => Json::String("-Inf".into()),
    }
}

/// The nearest double to an x87 80-bit long double (little-endian, padded
/// to 16 bytes).
fn long_double_to_f64(b: &[u8; 16]) -> f64 {
    let mant = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
    let se = u16::from_le_bytes([b[8], b[9]]);
    let sign = if se & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from(se & 0x7fff);
    if exp == 0x7fff {
        return if mant << 1 == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    // value = mant * 2^(exp - 16383 - 63); scale in two steps to stay finite
    let e = if exp == 0 { -16382 } else { exp - 16383 } - 63;
    sign * scale(mant as f64, e)
}

/// The nearest double to an IEEE binary128 (little-endian).
fn float128_to_f64(b: &[u8; 16]) -> f64 {
    let bits = u128::from_le_bytes(*b);
    let sign = if bits >> 127 != 0 { -1.0 } else { 1.0 };
    let exp = ((bits >> 112) & 0x7fff) as i32;
    let frac = bits & ((1u128 << 112) - 1);
    if exp == 0x7fff {
        return if frac == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    let (m, e) = if exp == 0 {
        (frac, -16382 - 112)
    } else {
        (frac | (1u128 << 112), exp - 16383 - 112)
    };
    sign * scale(m as f64, e)
}

fn scale(mut x: f64, mut e: i32) -> f64 {
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    x * 2f64.powi(e)
}

/// A JSON number as an integer when it is one (signed, else unsigned), else
/// a double; `None` for a number `f64` cannot hold.
pub(super) fn json_number(n: &serde_json::Number) -> Option<Value> {
    if let Some(i) = n.as_i64() {
        Some(Value::Int(i))
    } else if let Some(u) = n.as_u64() {
        Some(Value::UInt(u))
    } else {
        n.as_f64().map(Value::Double)
    }
}

pub(super) fn plain_from_json(j: &Json) -> Result<Value> {
    Ok(match j {
        Json::Null => Value::Undef,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => json_number(n).unwrap_or(Value::Double(f64::NAN)),
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(a) => crate::stack::deeper(|| {
            a.iter()
                .map(plain_from_json)
                .collect::<Result<Array>>()
                .map(|items| Value::Ref(Ref::array(items)))
        })?,
        Json::Object(m) => crate::stack::deeper(|| {
            let mut h = Hash::with_capacity(m.len());
            for (k, v) in m {
                h.insert(k.as_str(), plain_from_json(v)?);
            }
            Ok::<_, Error>(Value::Ref(Ref::hash(h)))
        })?,
    })
}
