//! The objects of a body and the items they bless, found by one walk of
//! the whole body, made the first time a question needs them: a second
//! reference (`REFP`) names no class, and one to a frozen object's values
//! is that object, as the decoder reads it.

use super::walk::Body;
use crate::error::Result;
use crate::protocol::tag;

/// The items objects bless: the position of each blessed item's tag
/// (after `PAD`s), the position of the object's tag, and whether a FREEZE
/// callback wrote it; sorted.
#[derive(Clone, Default)]
pub(crate) struct Objects(Vec<(usize, usize, bool)>);

impl<'v> Body<'v> {
    /// The body's objects, found when first asked.
    fn objects(&self) -> &'v Objects {
        self.objects.get_or_init(|| self.find_objects())
    }

    /// One checked walk of the root item, noting its objects. A walk cut
    /// short by an error notes those before it, which are all a reference
    /// a view reaches can name: what it names comes before it.
    fn find_objects(&self) -> Objects {
        let mut at = Vec::new();
        let _ = self.checked_walk(0, &mut Vec::new(), Some(&mut at));
        let mut blessed: Vec<_> = at
            .into_iter()
            .filter_map(|p| {
                let (item, frozen) = self.blessed_by(p).ok()??;
                Some((item, p, frozen))
            })
            .collect();
        blessed.sort_unstable();
        Objects(blessed)
    }

    /// The item the object at `p` blesses (its tag's position), and
    /// whether a FREEZE callback wrote the object.
    fn blessed_by(&self, p: usize) -> Result<Option<(usize, bool)>> {
        let (object, mut c) = self.tag(p)?;
        let value = match object.t {
            tag::OBJECT | tag::OBJECT_FREEZE => self.key(c.pos())?.1,
            _ => {
                c.varint()?;
                c.pos()
            }
        };
        let frozen = matches!(object.t, tag::OBJECT_FREEZE | tag::OBJECTV_FREEZE);
        Ok(match self.object_referent(value)? {
            Some(x) => Some((self.tag(x)?.0.at, frozen)),
            None => None,
        })
    }

    /// Where the tracked item an object's value (at `value`) blesses is
    /// written: the referent after its `REFN`, what its `REFP` names, or
    /// the value itself when it is tracked (the values of a frozen object
    /// written without a reference, a bare `REGEXP`); `None` when no
    /// back-reference can name it.
    pub fn object_referent(&self, value: usize) -> Result<Option<usize>> {
        let (v, mut c) = self.tag(value)?;
        Ok(match v.t {
            tag::REFN => Some(self.tag(c.pos())?.0)
                .filter(|r| r.tracked)
                .map(|r| r.at),
            tag::REFP => {
                let off = c.varint()?;
                Some(self.refp_target(&c, off, v.at)?)
            }
            _ => Some(v.at).filter(|_| v.tracked),
        })
    }

    /// The objects that bless the item at `x`, in the order they are
    /// written.
    fn blessings(&self, x: usize) -> Result<&'v [(usize, usize, bool)]> {
        let x = self.tag(x)?.0.at;
        let all = &self.objects().0;
        let from = all.partition_point(|e| e.0 < x);
        let to = from + all[from..].partition_point(|e| e.0 == x);
        Ok(&all[from..to])
    }

    /// The object whose class the item at `x` has once the document is
    /// read: the last that blesses it.
    pub fn blessing(&self, x: usize) -> Result<Option<usize>> {
        Ok(self.blessings(x)?.last().map(|e| e.1))
    }

    /// The frozen object (`OBJECT_FREEZE`) whose values are the tracked
    /// array at `x`: the decoder reads a back-reference to them as the
    /// object.
    pub fn frozen_values_of(&self, x: usize) -> Result<Option<usize>> {
        let (t, _) = self.tag(x)?;
        if t.t != tag::ARRAY || !t.tracked {
            return Ok(None);
        }
        Ok(self.blessings(x)?.iter().find(|e| e.2).map(|e| e.1))
    }
}
