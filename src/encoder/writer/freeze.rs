//! The writer's FREEZE objects: the handler's values, computed once per
//! object, written in the object's place and let go once written.

use super::{Via, Writer};
use crate::encoder::held::Held;
use crate::encoder::seen::Addr;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::tag;
use crate::value::{Key, NodeRc, Ref, Value};

impl Writer<'_> {
    /// The FREEZE values to write for an object whose class has a handler
    /// (with `freeze_callbacks`), computed once per object.
    pub(super) fn frozen(
        &mut self,
        rc: &NodeRc,
        held: Held,
        class: &Key,
    ) -> Result<Option<Vec<Value>>> {
        if !self.opts.freeze_callbacks || !self.callbacks.freeze.contains(class) {
            return Ok(None);
        }
        let refusal = if self.allowed.is_some_and(|a| !a.contains(class)) {
            Some("not in freeze_allow_classes")
        } else if self.callbacks.allow.is_some() {
            let object = Ref(rc.clone());
            let what = || {
                format!(
                    "freeze_allow_if for class '{}'",
                    String::from_utf8_lossy(class.as_bytes())
                )
            };
            let allowed = self.callback(self.depth, what, |cb| {
                Ok((cb.allow.as_ref().expect("checked"))(class, &object))
            })?;
            (!allowed).then_some("refused by freeze_allow_if")
        } else {
            None
        };
        if let Some(why) = refusal {
            if self.opts.freeze_deny_serialize {
                return Ok(None);
            }
            return Err(Error::new(ErrorKind::Callback(format!(
                "FREEZE not allowed for class '{}' ({why})",
                String::from_utf8_lossy(class.as_bytes())
            ))));
        }
        if held.count(rc) > 1 && self.retained.is_frozen(Addr::node(rc)) {
            return Err(met_again_untracked());
        }
        let object = Ref(rc.clone());
        let what = || {
            format!(
                "FREEZE callback of class '{}'",
                String::from_utf8_lossy(class.as_bytes())
            )
        };
        let vals = self.callback(self.depth, what, |cb| (cb.freeze(class)?)(&object))?;
        drop(object);
        self.retained.set_frozen(rc);
        Ok(Some(vals))
    }

    /// Writes an object whose FREEZE values stand for its body: tracked as
    /// the object, written as an array Perl holds itself (never the short
    /// form). `vals` are the values just computed, `None` for an object
    /// frozen before (always tracked, so written as a back-reference).
    pub(super) fn write_frozen(
        &mut self,
        rc: &NodeRc,
        held: Held,
        weak_ofs: u64,
        via: Via,
        vals: Option<Vec<Value>>,
    ) -> Result<()> {
        if self.track(rc, held, weak_ofs, via, true)?.is_none() {
            if let Some(vals) = vals {
                self.retained.release(vals);
            }
            return Ok(());
        }
        let Some(vals) = vals else {
            return Err(met_again_untracked());
        };
        if self.guarded {
            // The values are the encoder's own: nothing to lock at this depth.
            self.mark_active(Addr::NONE);
        }
        self.tag_varint(tag::ARRAY, vals.len() as u64);
        let result = vals.iter().try_for_each(|v| self.item(v, Held::GRAPH));
        self.retained.release(vals);
        result
    }
}

/// The error for a frozen object met again but not written as a
/// back-reference, whose FREEZE values are gone. A frozen object is always
/// tracked when written (`track`) and kept alive (`set_frozen`), so the
/// encoder reports this rather than write wrong bytes should that change.
fn met_again_untracked() -> Error {
    Error::new(ErrorKind::Callback(
        "an object was met again after its FREEZE values were let go".into(),
    ))
}
