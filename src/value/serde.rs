//! `Serialize` and `Deserialize` for [`Value`], so a graph converts to and
//! from any serde format (JSON, say).

use super::{Body, Hash, Key, Ref, Value};
use crate::blessed::protocol::{self, BLESSED, VALUE};
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, SerializeMap, SerializeSeq};
use std::cell::Cell;

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

const MAX_DEPTH: usize = 10_000;

/// Counts nesting while a value serializes, so a cycle is an error rather
/// than endless recursion; each level also runs through the crate's stack
/// guard, so the levels below the limit fit on any thread in any build.
struct Nested;

impl Nested {
    fn enter<E: ser::Error>() -> Result<Nested, E> {
        DEPTH.with(|d| {
            if d.get() >= MAX_DEPTH {
                return Err(E::custom("value graph too deep (or cyclic) for serde"));
            }
            d.set(d.get() + 1);
            Ok(Nested)
        })
    }
}

impl Drop for Nested {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
    }
}

fn text_or_bytes<S: ser::Serializer>(s: S, bytes: &[u8]) -> Result<S::Ok, S::Error> {
    match std::str::from_utf8(bytes) {
        Ok(t) => s.serialize_str(t),
        Err(_) => s.serialize_bytes(bytes),
    }
}

/// Serializes the data of a graph: scalars as themselves, byte strings as
/// text when they are valid UTF-8, arrays as sequences, hashes as maps,
/// references and aliases as what they refer to, a weak reference whose
/// node is gone as unit. A cycle is an error.
///
/// A blessed reference keeps its class with this crate's serializers
/// ([`to_vec`](crate::to_vec) writes an `OBJECT`, [`to_value`](crate::to_value)
/// a blessed node; see [`crate::blessed`]); other formats get its referent
/// alone, as if it were not blessed.
///
/// ```
/// use sereal::{Ref, Value};
/// let v = Value::hash([("id", Value::from(1)), ("tags", Value::array(["a"]))]);
/// assert_eq!(serde_json::to_string(&v).unwrap(), r#"{"id":1,"tags":["a"]}"#);
///
/// let obj = Value::Ref(Ref::array(vec![Value::from(1)]).blessed("Pair"));
/// assert_eq!(serde_json::to_string(&obj).unwrap(), "[1]");
/// let back = sereal::decode(&sereal::to_vec(&obj).unwrap()).unwrap();
/// assert_eq!(back.node().unwrap().class().unwrap().as_bytes(), b"Pair");
/// ```
impl ser::Serialize for Value {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Undef | Value::CanonicalUndef => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::True => s.serialize_bool(true),
            Value::False => s.serialize_bool(false),
            Value::Int(i) => s.serialize_i64(*i),
            Value::UInt(u) => s.serialize_u64(*u),
            Value::Float(f) => s.serialize_f32(*f),
            Value::Double(d) => s.serialize_f64(*d),
            Value::LongDouble(b) | Value::Float128(b) => s.serialize_bytes(&b[..]),
            Value::Bytes(b) | Value::Utf8(b) => text_or_bytes(s, b.as_bytes()),
            Value::Foreign(x) => Err(ser::Error::custom(format!(
                "a value of type {} cannot be serialized",
                x.type_name()
            ))),
            Value::Ref(_) | Value::Alias(_) | Value::Weak(_) => {
                let Some(node) = self.node() else {
                    return s.serialize_unit();
                };
                match node.class() {
                    Some(class) => s.serialize_newtype_struct(BLESSED, &Object { node, class }),
                    None => referent(&node, s),
                }
            }
        }
    }
}

/// What a node holds, without its class.
fn referent<S: ser::Serializer>(node: &Ref, s: S) -> Result<S::Ok, S::Error> {
    let _nested = Nested::enter()?;
    let body = node
        .try_body()
        .map_err(|_| ser::Error::custom("a node is borrowed for writing"))?;
    crate::stack::deeper(|| match &*body {
        Body::Scalar(v) => ser::Serialize::serialize(v, s),
        Body::Array(a) | Body::Frozen(a) => {
            let mut seq = s.serialize_seq(Some(a.len()))?;
            a.iter().try_for_each(|v| seq.serialize_element(v))?;
            seq.end()
        }
        Body::Hash(h) => {
            let mut map = s.serialize_map(Some(h.len()))?;
            for (k, v) in h.iter() {
                map.serialize_entry(&*String::from_utf8_lossy(k.as_bytes()), v)?;
            }
            map.end()
        }
        Body::Regexp(re) => text_or_bytes(s, re.pattern.as_bytes()),
    })
}

/// A blessed node, given with the private name of [`crate::blessed`]: its
/// class and referent to this crate's serializers, which ask for them, and
/// its referent alone to any other.
struct Object {
    node: Ref,
    class: Key,
}

impl ser::Serialize for Object {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if !protocol::parts_asked() {
            return referent(&self.node, s);
        }
        let class = String::from_utf8_lossy(self.class.as_bytes());
        protocol::write_parts(s, &class, &Referent(&self.node))
    }
}

struct Referent<'a>(&'a Ref);

impl ser::Serialize for Referent<'_> {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        referent(self.0, s)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f32<E>(self, v: f32) -> Result<Value, E> {
        Ok(Value::Float(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Double(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Value, E> {
        Ok(Value::bytes(v))
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Undef)
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Undef)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        de::Deserialize::deserialize(d)
    }
    fn visit_newtype_struct<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    // An object, from this crate's deserializers (or a tagged value, from
    // a format that has tags): the class, then the referent.
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        use de::VariantAccess;
        let (KeyText(class), referent) = data.variant::<KeyText>()?;
        Ok(protocol::bless(referent.newtype_variant::<Value>()?, class))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = super::Array::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(v) = seq.next_element::<Value>()? {
            items.push(v);
        }
        Ok(Value::Ref(super::Ref::array(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut h = Hash::with_capacity(map.size_hint().unwrap_or(0).min(4096));
        while let Some((k, v)) = map.next_entry::<KeyText, Value>()? {
            h.insert(k.0, v);
        }
        Ok(Value::from(h))
    }
}

/// A map key: text, or bytes (a Perl hash key need not be UTF-8).
struct KeyText(Key);

impl<'de> de::Deserialize<'de> for KeyText {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<KeyText, D::Error> {
        // Not `deserialize_str`: a key flagged UTF-8 whose bytes are not
        // comes as bytes only to a visitor that takes anything.
        d.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

impl Visitor<'_> for KeyVisitor {
    type Value = KeyText;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E>(self, v: &str) -> Result<KeyText, E> {
        Ok(KeyText(Key::from(v)))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<KeyText, E> {
        Ok(KeyText(Key::bytes(v)))
    }
    // Formats whose keys may be numbers or booleans (MessagePack, YAML):
    // the key is their text, as the serializer writes such keys.
    fn visit_bool<E>(self, v: bool) -> Result<KeyText, E> {
        Ok(KeyText(Key::from(if v { "true" } else { "false" })))
    }
    fn visit_i64<E>(self, v: i64) -> Result<KeyText, E> {
        Ok(KeyText(Key::from(v.to_string().as_str())))
    }
    fn visit_u64<E>(self, v: u64) -> Result<KeyText, E> {
        Ok(KeyText(Key::from(v.to_string().as_str())))
    }
    fn visit_f64<E>(self, v: f64) -> Result<KeyText, E> {
        Ok(KeyText(Key::from(v.to_string().as_str())))
    }
    fn visit_char<E>(self, v: char) -> Result<KeyText, E> {
        Ok(KeyText(Key::from(v.encode_utf8(&mut [0; 4]) as &str)))
    }
}

/// Builds a graph (a tree) from any serde data: sequences become arrays,
/// maps hashes, text byte strings when ASCII and UTF-8 strings otherwise.
///
/// From this crate's deserializers ([`from_slice`](crate::from_slice),
/// streams, [`from_value`](crate::from_value)), an object comes back
/// blessed into its class: its referent is read as a `Value`, and a
/// container so read is blessed, anything else is referred to by a blessed
/// scalar cell (as [`decode`](crate::decode) gives a blessed scalar
/// reference). A frozen object comes back as a blessed array of its
/// FREEZE values; a weak reference or an `ALIAS` to an object reads as
/// the unblessed referent. From a format with tags, a tagged value (which
/// serde hands over as an enum) is blessed into its tag.
///
/// ```
/// let v: sereal::Value = serde_json::from_str(r#"{"a": [1, 2.5, null]}"#).unwrap();
/// assert_eq!(v, sereal::Value::hash([("a", sereal::Value::array([
///     sereal::Value::from(1), sereal::Value::from(2.5), sereal::Value::Undef]))]));
///
/// let bytes = sereal::to_vec(&sereal::Blessed::new("My::Prefs", [("size", 3)].into_iter()
///     .collect::<std::collections::BTreeMap<_, _>>())).unwrap();
/// let v: sereal::Value = sereal::from_slice(&bytes).unwrap();
/// assert_eq!(v.node().unwrap().class().unwrap().as_bytes(), b"My::Prefs");
/// ```
impl<'de> de::Deserialize<'de> for Value {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        // The private name of `crate::blessed`: this crate's deserializers
        // hand an object over with its class; others read on as
        // `deserialize_any`.
        d.deserialize_newtype_struct(VALUE, ValueVisitor)
    }
}
