//! The writer's side of the callback boundary: the depth it has reached,
//! the record of the node being written at each depth (Guard), and the
//! locks and retention a callback runs under.

use super::Writer;
use crate::encoder::held::Held;
use crate::encoder::seen::Addr;
use crate::encoder::Callbacks;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::depth_limit;
use crate::value::guard::Scope;
use crate::value::{Node, Value};

/// The references to references one path may hold beyond
/// `max_recursion_depth` (which does not count them, as Perl's does not).
const FREE_LEVELS: usize = 10_000;

impl Writer<'_> {
    /// Goes one level deeper. When callbacks can run, `active` then has an
    /// entry for the new depth (which `mark_active` relies on).
    #[inline]
    pub(super) fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth >= self.enter_limit {
            return self.enter_deep();
        }
        Ok(())
    }

    /// Writes an array's element, a hash's value or a FREEZE value. Perl's
    /// encoder writes such a slot in place when it is a plain scalar, and
    /// takes a level of `max_recursion_depth` for anything else: a
    /// reference (which `value` enters), undef, an immortal, data Sereal
    /// cannot carry; this checks that level where `value` enters none.
    pub(super) fn item(&mut self, v: &Value, held: Held) -> Result<()> {
        let leaf = match v {
            Value::Undef | Value::CanonicalUndef | Value::True | Value::False => true,
            Value::Foreign(_) => true,
            Value::Weak(w) => w.0.strong_count() == 0,
            _ => false,
        };
        if leaf {
            self.leaf_level()?;
        }
        self.value(v, held)
    }

    /// Checks the level a leaf takes that is written without entering it
    /// (see `item`): the depth stays, so no callback of the leaf's sees a
    /// depth whose node is not being written.
    #[inline]
    pub(super) fn leaf_level(&self) -> Result<()> {
        if self.depth + 1 >= self.enter_limit {
            return self.leaf_level_deep();
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn leaf_level_deep(&self) -> Result<()> {
        self.depth_check(self.depth + 1)
    }

    /// Whether a slot at `depth` may be written: its counted levels (see
    /// `free`) stay under `max_recursion_depth`, and the references to
    /// references on its path, which Perl's encoder follows in a loop,
    /// number no more than `FREE_LEVELS` (they are nesting here, and every
    /// callback locks the nodes of every level).
    fn depth_check(&self, depth: usize) -> Result<()> {
        let max = depth_limit(self.opts.max_recursion_depth);
        if depth.saturating_sub(self.free) >= max || depth >= max.saturating_add(FREE_LEVELS) {
            return Err(Error::new(ErrorKind::DepthExceeded(max)));
        }
        Ok(())
    }

    /// Writes `f`'s value with the reference it may be not counted against
    /// `max_recursion_depth` (see `free`).
    #[inline]
    pub(super) fn uncounted(&mut self, f: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        self.free += 1;
        self.enter_limit = self.limit();
        let r = f(self);
        self.free -= 1;
        self.enter_limit = self.limit();
        r
    }

    #[cold]
    #[inline(never)]
    pub(super) fn enter_deep(&mut self) -> Result<()> {
        self.depth_check(self.depth)?;
        if self.guarded && self.active.len() <= self.depth {
            self.active.resize(self.depth + 64, Addr::NONE);
        }
        self.enter_limit = self.limit();
        Ok(())
    }

    /// See `enter_limit`.
    pub(super) fn limit(&self) -> usize {
        let free = self.free.min(FREE_LEVELS);
        let max = depth_limit(self.opts.max_recursion_depth).saturating_add(free);
        if self.guarded {
            max.min(self.active.len())
        } else {
            max
        }
    }

    /// Runs user code at a callback boundary. Under the Guard policy every
    /// node being written is locked for its duration (a mutation attempt
    /// gets an error, and fails the encode); under either policy, from the
    /// first callback on, every node and key the seen tables name is kept
    /// alive until the document ends.
    ///
    /// `levels` is the number of depths whose node is being written: the
    /// current depth's too for a callback inside a body (stringify), not for
    /// one before a node is entered (FREEZE).
    pub(super) fn callback<T>(
        &mut self,
        levels: usize,
        what: impl Fn() -> String,
        f: impl FnOnce(&mut Callbacks) -> Result<T>,
    ) -> Result<T> {
        if !self.retained.on {
            self.note_written_keys();
        }
        self.retained.start(self.seen);
        // Depth 1 is the root slot; nodes are entered from depth 2 on. An
        // `Addr::NONE` entry is a depth whose content the encoder owns
        // (FREEZE values).
        let end = if self.snapshot {
            0
        } else {
            levels.min(self.active.len())
        };
        let nodes: Vec<*const Node> = self.active[2.min(end)..end]
            .iter()
            .filter_map(|b| b.boxed_node())
            .collect();
        // SAFETY: the nodes being written are held by their parents (locked
        // too) or by the caller's root, so they outlive this call.
        let locks: Vec<_> = nodes.iter().map(|&p| unsafe { &*p }.lock()).collect();
        let scope = Scope::enter(nodes.iter().map(|p| p.addr()).collect());
        if self.retained.drop_released() && scope.refused() {
            drop(scope);
            drop(locks);
            return Err(Error::new(ErrorKind::Callback(
                "dropping the FREEZE values of an object written before tried to change a \
                 container being encoded"
                    .into(),
            )));
        }
        let result = f(self.callbacks);
        let refused = scope.refused();
        drop(scope);
        drop(locks);
        match result {
            Err(e) => {
                Err(Error::new(ErrorKind::Callback(format!("{} failed: {e}", what()))).caused_by(e))
            }
            Ok(_) if refused => Err(Error::new(ErrorKind::Callback(format!(
                "{} tried to change a container being encoded",
                what()
            )))),
            Ok(v) => Ok(v),
        }
    }

    /// Names the node whose box is at `addr` ([`Addr::NONE`] for none) as
    /// the one being written at this depth, for a callback below it to lock.
    #[inline(always)]
    pub(super) fn mark_active(&mut self, addr: Addr) {
        debug_assert!(self.guarded && self.depth < self.active.len());
        // SAFETY: marks are made only when callbacks can run, at a depth
        // `enter` reached, which made `active` that long.
        unsafe { *self.active.get_unchecked_mut(self.depth) = addr };
    }
}

#[cfg(test)]
mod tests {
    use crate::{CallbackPolicy, Encoder, EncoderOptions, ErrorKind, Ref, Value};
    use std::cell::Cell;
    use std::rc::Rc;

    /// A FREEZE handler that runs while another object's FREEZE values are
    /// written (a depth whose content is the encoder's) finds the array and
    /// the hash being written locked under Guard, and the encode fails
    /// naming it; under Snapshot it may change them.
    #[test]
    fn a_callback_finds_the_containers_being_written_locked() {
        for policy in [CallbackPolicy::Guard, CallbackPolicy::Snapshot] {
            let inner = Ref::array(vec![Value::from(2)]).blessed("Inner");
            let outer = Ref::array(vec![Value::from(1)]).blessed("Outer");
            let hash = Ref::hash([("o", Value::Ref(outer))].into_iter().collect());
            let root = Ref::array(vec![Value::from(0), Value::Ref(hash.clone())]);
            let refused = Rc::new(Cell::new((false, false)));
            let mut enc =
                Encoder::new(EncoderOptions::new().freeze_callbacks(true).policy(policy)).unwrap();
            enc.on_freeze("Outer", move |_| Ok(vec![Value::Ref(inner.clone())]));
            let (r, h, seen) = (root.clone(), hash.clone(), Rc::clone(&refused));
            enc.on_freeze("Inner", move |_| {
                let locked =
                    |r: crate::Result<()>| r.is_err_and(|e| e.kind() == &ErrorKind::Locked);
                seen.set((
                    locked(r.array_mut().map(drop)),
                    locked(h.hash_mut().map(drop)),
                ));
                Ok(vec![])
            });
            let result = enc.encode(&Value::Ref(root.clone()));
            let guard = policy == CallbackPolicy::Guard;
            assert_eq!(refused.get(), (guard, guard), "{policy:?}");
            match result {
                Err(e) => {
                    assert!(guard, "{policy:?}: {e}");
                    assert!(e.to_string().contains("tried to change"), "{e}");
                }
                Ok(_) => assert!(!guard, "{policy:?}"),
            }
            assert_eq!(root.as_array().unwrap().len(), 2);
        }
    }
}
