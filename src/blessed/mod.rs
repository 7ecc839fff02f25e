//! Perl objects through serde: [`Blessed<T>`], a class name and a value,
//! and [`PerlClass`] with this module's `serialize`/`deserialize`, for
//! `#[serde(with = "sereal::blessed")]` on a field whose type has a fixed
//! class.
//!
//! Serde has no notion of a class, so the class crosses it by a private
//! protocol that this crate's serializers and deserializers recognize (a
//! magic newtype name, as serde_json's `RawValue` uses): to them a
//! `Blessed<T>` is Perl's `OBJECT` (or `OBJECTV`, when the class name was
//! written before in the document, as Perl's encoder writes it) followed by
//! a reference to `T`. Any other format sees a struct of two fields,
//! `class` and `value`, which reads back as a `Blessed<T>`:
//!
//! ```
//! #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
//! struct Prefs { theme: String }
//! let p = sereal::Blessed::new("My::Prefs", Prefs { theme: "dark".into() });
//! let json = serde_json::to_string(&p).unwrap();
//! assert_eq!(json, r#"{"class":"My::Prefs","value":{"theme":"dark"}}"#);
//! let back: sereal::Blessed<Prefs> = serde_json::from_str(&json).unwrap();
//! assert_eq!(back, p);
//! ```
//!
//! A frozen object (`OBJECT_FREEZE`, written by a FREEZE handler) reads as
//! its class and the array of values FREEZE returned, which is what a THAW
//! handler would be given; writing it back gives a plain object of that
//! array (no FREEZE marker).

use serde::de::{self, Deserialize, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess};
use serde::ser::{Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;

pub(crate) mod protocol;

use protocol::{BLESSED, FIELDS, PARTS};

/// A Perl object: a class name and the value blessed into it.
///
/// Reads from any blessed referent (Perl's `OBJECT` and `OBJECTV`, and a
/// frozen object as its FREEZE values), by [`from_slice`](crate::from_slice),
/// typed streams ([`Deserializer`](crate::Deserializer)) and
/// [`from_value`](crate::from_value); an unblessed value is an error that
/// says so. Writes, by [`to_vec`](crate::to_vec) and
/// [`to_value`](crate::to_value), as the object Perl's decoder blesses into
/// the class: a value that is not a reference in Sereal (a number, a
/// string) is written as a blessed reference to it.
///
/// ```
/// use sereal::Blessed;
/// #[derive(serde::Serialize, serde::Deserialize, Clone, PartialEq, Debug)]
/// struct Prefs { theme: String, size: u32 }
///
/// let p = Blessed::new("My::Prefs", Prefs { theme: "dark".into(), size: 3 });
/// let bytes = sereal::to_vec(&p).unwrap();
/// let v = sereal::decode(&bytes).unwrap();
/// assert_eq!(v.node().unwrap().class().unwrap().as_bytes(), b"My::Prefs");
///
/// let back: Blessed<Prefs> = sereal::from_slice(&bytes).unwrap();
/// assert_eq!(back.class(), "My::Prefs");
/// assert_eq!(back.size, 3); // through `Deref`
/// // `Option<Blessed<T>>`: undef is `None`
/// let none: Option<Blessed<Prefs>> = sereal::from_slice(&sereal::to_vec(&()).unwrap()).unwrap();
/// assert!(none.is_none());
/// // an unblessed hash is no object
/// let plain = sereal::to_vec(&Prefs { theme: "x".into(), size: 1 }).unwrap();
/// let err = sereal::from_slice::<Blessed<Prefs>>(&plain).unwrap_err();
/// assert!(err.to_string().contains("not blessed"), "{err}");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Blessed<T> {
    class: String,
    value: T,
}

impl<T> Blessed<T> {
    /// `value` blessed into `class`.
    ///
    /// ```
    /// let b = sereal::Blessed::new("Point", (1, 2));
    /// assert_eq!((b.class(), *b.value()), ("Point", (1, 2)));
    /// ```
    pub fn new(class: impl Into<String>, value: T) -> Blessed<T> {
        Blessed {
            class: class.into(),
            value,
        }
    }

    /// The class name (a class name that is not UTF-8 was read with
    /// U+FFFD in place of its invalid bytes).
    ///
    /// ```
    /// assert_eq!(sereal::Blessed::new("My::Prefs", 0).class(), "My::Prefs");
    /// ```
    pub fn class(&self) -> &str {
        &self.class
    }

    /// The value.
    ///
    /// ```
    /// assert_eq!(*sereal::Blessed::new("Id", 7).value(), 7);
    /// ```
    pub fn value(&self) -> &T {
        &self.value
    }

    /// The value, to change it (the class stays).
    ///
    /// ```
    /// let mut b = sereal::Blessed::new("Id", 7);
    /// *b.value_mut() += 1;
    /// assert_eq!(*b, 8);
    /// ```
    pub fn value_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// The value, without its class.
    ///
    /// ```
    /// assert_eq!(sereal::Blessed::new("Id", 7).into_inner(), 7);
    /// ```
    pub fn into_inner(self) -> T {
        self.value
    }

    /// The class and the value.
    ///
    /// ```
    /// let (class, v) = sereal::Blessed::new("Id", 7).into_parts();
    /// assert_eq!((class.as_str(), v), ("Id", 7));
    /// ```
    pub fn into_parts(self) -> (String, T) {
        (self.class, self.value)
    }
}

/// The value, so that its fields and methods are at hand.
///
/// ```
/// let b = sereal::Blessed::new("Name", String::from("ann"));
/// assert_eq!(b.len(), 3);
/// ```
impl<T> std::ops::Deref for Blessed<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// The value, to change it in place.
///
/// ```
/// let mut b = sereal::Blessed::new("Names", vec!["a"]);
/// b.push("b");
/// assert_eq!(b.len(), 2);
/// ```
impl<T> std::ops::DerefMut for Blessed<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

/// As Perl's object, for this crate's serializers; as a struct of `class`
/// and `value` for other formats (see the [module](self) docs).
///
/// ```
/// let bytes = sereal::to_vec(&sereal::Blessed::new("Id", 7)).unwrap();
/// let v = sereal::decode(&bytes).unwrap();
/// assert_eq!(v.node().unwrap().class().unwrap().as_bytes(), b"Id");
/// ```
impl<T: Serialize> Serialize for Blessed<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_newtype_struct(BLESSED, &Parts(&self.class, &self.value))
    }
}

/// The parts of an object, given with the private name.
struct Parts<'a, T: ?Sized>(&'a str, &'a T);

impl<T: Serialize + ?Sized> Serialize for Parts<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Asked or not, the parts are the struct.
        protocol::parts_asked();
        protocol::write_parts(s, self.0, self.1)
    }
}

/// From a blessed value of any class (this crate's formats), or from the
/// struct other formats write (see the [module](self) docs).
///
/// ```
/// let bytes = sereal::to_vec(&sereal::Blessed::new("Id", 7)).unwrap();
/// let b: sereal::Blessed<u8> = sereal::from_slice(&bytes).unwrap();
/// assert_eq!(b, sereal::Blessed::new("Id", 7));
/// ```
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Blessed<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Blessed<T>, D::Error> {
        d.deserialize_newtype_struct(BLESSED, BlessedVisitor(PhantomData))
    }
}

struct BlessedVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> de::Visitor<'de> for BlessedVisitor<T> {
    type Value = Blessed<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Perl object (a blessed value)")
    }

    // This crate's deserializers: the class as the variant.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Blessed<T>, A::Error> {
        let (Text(class), content) = data.variant::<Text>()?;
        let value = content.newtype_variant::<T>()?;
        Ok(Blessed { class, value })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Blessed<T>, D::Error> {
        d.deserialize_struct(PARTS, FIELDS, self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Blessed<T>, A::Error> {
        let (mut class, mut value) = (None, None);
        while let Some(Text(k)) = map.next_key::<Text>()? {
            match k.as_str() {
                "class" => class = Some(map.next_value::<Text>()?.0),
                "value" => value = Some(map.next_value::<T>()?),
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        let class = class.ok_or_else(|| de::Error::missing_field("class"))?;
        let value = value.ok_or_else(|| de::Error::missing_field("value"))?;
        Ok(Blessed { class, value })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Blessed<T>, A::Error> {
        let class = seq.next_element::<Text>()?;
        let class = class.ok_or_else(|| de::Error::invalid_length(0, &self))?.0;
        let value = seq.next_element::<T>()?;
        let value = value.ok_or_else(|| de::Error::invalid_length(1, &self))?;
        Ok(Blessed { class, value })
    }
}

/// A class name or a field name: text, or bytes read with U+FFFD in place
/// of what is not UTF-8.
struct Text(String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        d.deserialize_string(TextVisitor)
    }
}

struct TextVisitor;

impl de::Visitor<'_> for TextVisitor {
    type Value = Text;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a class name")
    }
    fn visit_str<E>(self, v: &str) -> Result<Text, E> {
        Ok(Text(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Text, E> {
        Ok(Text(v))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Text, E> {
        Ok(Text(String::from_utf8_lossy(v).into_owned()))
    }
}

/// A type whose values are Perl objects of one class: with this module's
/// [`serialize`] and [`deserialize`], a field of the type is written
/// blessed into [`PerlClass::CLASS`] and read from an object of that class,
/// without a [`Blessed`] wrapper.
///
/// Reading requires the class to be `CLASS` exactly (an object of another
/// class, a subclass included, is an error that names both; read a
/// [`Blessed<T>`] to take any class), and an unblessed value is an error.
///
/// ```
/// use serde::{Deserialize, Serialize};
/// #[derive(Serialize, Deserialize, PartialEq, Debug)]
/// struct Prefs { theme: String }
/// impl sereal::PerlClass for Prefs { const CLASS: &'static str = "My::Prefs"; }
///
/// #[derive(Serialize, Deserialize, PartialEq, Debug)]
/// struct User {
///     name: String,
///     #[serde(with = "sereal::blessed")]
///     prefs: Prefs,
/// }
///
/// let u = User { name: "ann".into(), prefs: Prefs { theme: "dark".into() } };
/// let bytes = sereal::to_vec(&u).unwrap();
/// let v = sereal::decode(&bytes).unwrap();
/// let prefs = v.get("prefs").unwrap().node().unwrap();
/// assert_eq!(prefs.class().unwrap().as_bytes(), b"My::Prefs");
/// assert_eq!(sereal::from_slice::<User>(&bytes).unwrap(), u);
/// ```
pub trait PerlClass {
    /// The Perl class (package) name.
    const CLASS: &'static str;
}

/// Writes `value` blessed into `T::CLASS`: the `serialize` of
/// `#[serde(with = "sereal::blessed")]` (see [`PerlClass`]).
///
/// ```
/// struct Id(u8);
/// impl sereal::PerlClass for Id { const CLASS: &'static str = "Id"; }
/// impl serde::Serialize for Id {
///     fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
///         s.serialize_u8(self.0)
///     }
/// }
/// let mut out = Vec::new();
/// let mut ser = sereal::Serializer::new(&mut out, Default::default()).unwrap();
/// sereal::blessed::serialize(&Id(7), &mut ser).unwrap();
/// ser.finish().unwrap();
/// let v = sereal::decode(&out).unwrap();
/// assert_eq!(v.node().unwrap().class().unwrap().as_bytes(), b"Id");
/// ```
pub fn serialize<T, S>(value: &T, s: S) -> Result<S::Ok, S::Error>
where
    T: Serialize + PerlClass,
    S: Serializer,
{
    s.serialize_newtype_struct(BLESSED, &Parts(T::CLASS, value))
}

/// Reads a `T` from an object of class `T::CLASS`: the `deserialize` of
/// `#[serde(with = "sereal::blessed")]` (see [`PerlClass`]).
///
/// ```
/// #[derive(serde::Deserialize, Debug)]
/// struct Id(u8);
/// impl sereal::PerlClass for Id { const CLASS: &'static str = "Id"; }
/// let bytes = sereal::to_vec(&sereal::Blessed::new("Id", 7)).unwrap();
/// let mut de = sereal::Deserializer::from_slice(&bytes);
/// let id: Id = sereal::blessed::deserialize(&mut de).unwrap();
/// assert_eq!(id.0, 7);
/// let other = sereal::to_vec(&sereal::Blessed::new("Other", 7)).unwrap();
/// let mut de = sereal::Deserializer::from_slice(&other);
/// let err = sereal::blessed::deserialize::<Id, _>(&mut de).unwrap_err();
/// assert!(err.to_string().contains("class Other"), "{err}");
/// ```
pub fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
where
    T: Deserialize<'de> + PerlClass,
    D: Deserializer<'de>,
{
    let (class, value) = Blessed::<T>::deserialize(d)?.into_parts();
    if class != T::CLASS {
        return Err(de::Error::custom(format_args!(
            "expected an object of class {}, found one of class {class}",
            T::CLASS
        )));
    }
    Ok(value)
}
