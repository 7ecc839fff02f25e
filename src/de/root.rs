//! The root of a one-shot read: the document as the target type's first
//! call sees it, before any deserializer state is built.

use super::*;

/// A document with the common header (protocol 3 to 5, raw, no suffix)
/// whose body the target's first call may answer without a
/// [`Deserializer`]: a body that is one plain `UNDEF` read as an `Option`,
/// or one plain `DOUBLE` read as a float, the values the deserializer reads
/// in place. Any other call, or any other body, builds the deserializer
/// (limits, depth, budget, stack floor) in `de` and reads as it does; the
/// caller checks that it read the body to its end once the target has
/// its value, so both routes give the same values and the same errors.
pub(super) struct Root<'de, 'r, O> {
    pub(super) input: &'de [u8],
    pub(super) opts: O,
    pub(super) de: &'r mut Option<Body<'de>>,
}

/// Where the body starts.
const LEN: usize = Header::RAW_LEN;

impl<'de, O: Options> Root<'de, '_, O> {
    #[inline(always)]
    fn body(&self) -> &'de [u8] {
        &self.input[LEN..]
    }

    /// Reads by `f` with the whole deserializer, built in the caller's
    /// slot.
    #[inline(always)]
    fn read<R>(self, f: impl FnOnce(&mut Body<'de>) -> Result<R>) -> Result<R> {
        f(self.de.insert(Body::over(
            Framed::raw(self.input, LEN),
            self.opts.get(),
            Stack::lazy(),
            0,
        )))
    }

    /// An error of the root's read that carries no position (a visitor's,
    /// or the target type's own after its read), placed where the
    /// deserializer places it: at the body's first byte.
    #[cold]
    pub(super) fn place(e: Error) -> Error {
        e.or_at(LEN, false)
    }
}

// `deserialize_*` methods that build the deserializer and call it, with
// the arguments given before the visitor.
macro_rules! by_deserializer {
    ($($m:ident($($arg:ident: $t:ty),*);)*) => {$(
        fn $m<V: Visitor<'de>>(self, $($arg: $t,)* visitor: V) -> Result<V::Value> {
            self.read(|de| de.$m($($arg,)* visitor))
        }
    )*};
}

impl<'de, O: Options> de::Deserializer<'de> for Root<'de, '_, O> {
    type Error = Error;

    /// As the deserializer's: binary forms.
    fn is_human_readable(&self) -> bool {
        false
    }

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if let [tag::UNDEF | tag::CANONICAL_UNDEF] = self.body() {
            return visitor.visit_none();
        }
        self.read(|de| de.deserialize_option(visitor))
    }

    #[inline]
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let body = self.body();
        if body.len() == 9 {
            if let Some(d) = double(body) {
                return visitor.visit_f64(d);
            }
        }
        self.read(|de| de.deserialize_f64(visitor))
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        if super::object::private(name) {
            return self.read(|de| de.deserialize_newtype_struct(name, visitor));
        }
        // As the deserializer does: the newtype reads its field from here.
        visitor.visit_newtype_struct(self)
    }

    by_deserializer! {
        deserialize_any(); deserialize_bool(); deserialize_char();
        deserialize_i8(); deserialize_i16(); deserialize_i32(); deserialize_i64(); deserialize_i128();
        deserialize_u8(); deserialize_u16(); deserialize_u32(); deserialize_u64(); deserialize_u128();
        deserialize_str(); deserialize_string(); deserialize_bytes(); deserialize_byte_buf();
        deserialize_unit(); deserialize_unit_struct(name: &'static str);
        deserialize_seq(); deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map(); deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier(); deserialize_ignored_any();
    }
}
