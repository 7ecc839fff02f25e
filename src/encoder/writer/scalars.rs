//! The writer's scalars: booleans, numbers, and the values Sereal cannot
//! carry.

use super::Writer;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{self, tag};
use crate::value::{Foreign, Value};

impl Writer<'_> {
    pub(super) fn write_foreign(&mut self, x: &Foreign) -> Result<()> {
        let o = self.opts;
        if !o.undef_unknown && !o.stringify_unknown {
            return Err(Error::new(ErrorKind::Unsupported(format!(
                "found a value of type {}, which Sereal cannot carry (see undef_unknown, stringify_unknown)",
                x.type_name()
            ))));
        }
        if o.warn_unknown {
            let form = if o.undef_unknown {
                "an undefined value"
            } else {
                "a stringified form"
            };
            self.warnings.push(format!(
                "found a value of type {}, which Sereal cannot carry; encoded as {form}",
                x.type_name()
            ));
        }
        if o.undef_unknown {
            self.out.push(tag::UNDEF);
            return Ok(());
        }
        let text = if self.callbacks.stringify.is_some() {
            let what = || format!("stringify callback for a value of type {}", x.type_name());
            self.callback(self.depth + 1, what, |cb| (cb.stringify()?)(x))?
        } else {
            format!("{x:?}")
        };
        self.write_pv(text.as_bytes(), !text.is_ascii());
        Ok(())
    }

    #[inline]
    pub(super) fn write_bool(&mut self, b: bool) {
        if self.opts.protocol_version >= 5 {
            self.out.push(if b { tag::YES } else { tag::NO });
        } else {
            // Perl's booleans before protocol 5: 1 and the empty string.
            self.out.push(if b {
                tag::POS_0 + 1
            } else {
                tag::SHORT_BINARY_0
            });
        }
    }

    #[inline]
    pub(super) fn write_int(&mut self, i: i64) {
        protocol::write_int(&mut self.out, i);
    }

    #[inline]
    pub(super) fn write_uint(&mut self, u: u64) {
        protocol::write_uint(&mut self.out, u);
    }

    pub(super) fn write_double(&mut self, d: f64) {
        let f = d as f32;
        if f64::from(f) == d || d.is_nan() {
            self.out.push(tag::FLOAT);
            self.out.extend_from_slice(&f.to_le_bytes());
        } else {
            self.out.push(tag::DOUBLE);
            self.out.extend_from_slice(&d.to_le_bytes());
        }
    }

    /// Writes the commonest scalars without a call: integers, and strings
    /// when no deduplication applies. Returns false for anything
    /// else, which [`Writer::value`] writes.
    #[inline(always)]
    pub(super) fn plain_scalar(&mut self, v: &Value) -> bool {
        match v {
            Value::Int(i) => self.write_int(*i),
            Value::Bytes(s) if !self.dedupe => self.write_str(s, false),
            _ => return false,
        }
        true
    }

    /// Perl's immortals are written by tag, never tracked.
    pub(super) fn immortal_tag(&self, v: &Value) -> Option<u8> {
        match v {
            Value::True => Some(tag::TRUE),
            Value::False => Some(tag::FALSE),
            Value::CanonicalUndef if self.opts.protocol_version >= 3 => Some(tag::CANONICAL_UNDEF),
            _ => None,
        }
    }
}
