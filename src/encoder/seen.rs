//! The encoder's seen tables: what was written where, for REFP, ALIAS,
//! COPY, OBJECTV and string deduplication; and the retention of everything
//! they name once a callback has run.
//!
//! The tables hold addresses ([`Addr`]) and offsets only, and are emptied
//! after every document, so an encoder that keeps them between documents
//! can move to another thread. The handles that keep nodes and keys alive
//! ([`Retained`]) belong to one body's writing and are dropped with it.

use crate::value::{string_to_latin1, Key, Node, NodeRc};
use hashbrown::hash_map::Entry;
use hashbrown::{HashMap, HashTable};
use std::hash::{BuildHasher, Hash, Hasher};

/// What the seen tables are keyed by: a node (as [`NodeRc::as_ptr`] gives
/// it), a key (as [`Key::as_ptr`] gives it) or a node's box (as
/// [`NodeRc::box_ptr`] gives it), kept as a pointer so that [`Retained`]
/// can make a handle on it again; or one of Perl's immortals, by its tag
/// (an address below [`IMMORTAL_KEYS`], of no allocation). Compared and
/// hashed by address.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Addr(*const u8);

// SAFETY: an `Addr` is dereferenced only while the document whose writing
// recorded it is written, on the thread writing it (see `Retained` and
// `Writer::callback`); every table holding one is emptied before the
// encoder is used again, so none is ever followed on another thread.
unsafe impl Send for Addr {}
// SAFETY: as above; a shared encoder reads no `Addr`.
unsafe impl Sync for Addr {}

impl Addr {
    /// No node: an `active` entry whose depth's content is the encoder's.
    pub const NONE: Addr = Addr(std::ptr::null());

    /// The node `rc` holds.
    #[inline(always)]
    pub fn node(rc: &NodeRc) -> Addr {
        Addr(NodeRc::as_ptr(rc).cast())
    }

    /// The box of the node `rc` holds.
    #[inline(always)]
    pub fn node_box(rc: &NodeRc) -> Addr {
        Addr(rc.box_ptr())
    }

    /// The key `k`.
    #[inline(always)]
    pub fn key(k: &Key) -> Addr {
        Addr(k.as_ptr())
    }

    /// Perl's immortal scalar whose tag is `t`.
    pub fn immortal(t: u8) -> Addr {
        Addr(std::ptr::without_provenance(usize::from(t)))
    }

    /// The node in the box this names, if it names one.
    pub fn boxed_node(self) -> Option<*const Node> {
        (!self.0.is_null()).then(|| NodeRc::node_of_box(self.0))
    }
}

impl Hash for Addr {
    #[inline(always)]
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.0.addr());
    }
}

/// The hasher for tables keyed by addresses: one multiply.
#[derive(Default, Clone, Copy)]
pub(super) struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(26);
    }
}

impl BuildHasher for AddrHasher {
    type Hasher = AddrHasher;
    fn build_hasher(&self) -> AddrHasher {
        AddrHasher(0)
    }
}

pub(super) type AddrMap<V = u64> = HashMap<Addr, V, AddrHasher>;
type AddrSet = hashbrown::HashSet<Addr, AddrHasher>;

/// String values already written, for `dedupe_strings`: the strings are
/// copied into one arena so the table owns what it compares.
#[derive(Default)]
pub(super) struct Dedupe {
    arena: Vec<u8>,
    // (hash, arena start, length, utf8 key flag, body offset)
    table: HashTable<(u64, usize, usize, bool, u64)>,
    hasher: hashbrown::DefaultHashBuilder,
}

impl Dedupe {
    fn clear(&mut self) {
        self.arena.clear();
        self.table.clear();
    }

    /// The offset of an equal string written before, or `None` after
    /// recording this one at `offset`. Equality is Perl's hash-key equality:
    /// a UTF-8 string equals the byte string of its Latin-1 downgrade.
    pub(super) fn find_or_insert(&mut self, bytes: &[u8], utf8: bool, offset: u64) -> Option<u64> {
        let downgraded;
        let (key, key_utf8): (&[u8], bool) = if utf8 && !bytes.is_ascii() {
            match latin1_downgrade(bytes) {
                Some(d) => {
                    downgraded = d;
                    (&downgraded, false)
                }
                None => (bytes, true),
            }
        } else {
            (bytes, false)
        };
        let mut h = self.hasher.build_hasher();
        h.write(key);
        h.write_u8(key_utf8 as u8);
        let hash = h.finish();
        let arena = &self.arena;
        if let Some(e) = self.table.find(hash, |e| {
            e.0 == hash && e.3 == key_utf8 && &arena[e.1..e.1 + e.2] == key
        }) {
            return Some(e.4);
        }
        let start = self.arena.len();
        self.arena.extend_from_slice(key);
        self.table
            .insert_unique(hash, (hash, start, key.len(), key_utf8, offset), |e| e.0);
        None
    }
}

fn latin1_downgrade(utf8: &[u8]) -> Option<Vec<u8>> {
    string_to_latin1(std::str::from_utf8(utf8).ok()?)
}

/// Slots of the key cache: many more than the distinct keys of typical
/// records, so two keys rarely share a slot.
pub(super) const KEY_CACHE: usize = 1024;

/// The cache slot of a key address: the address in units of 16 bytes
/// (key boxes are 32 bytes, so two live keys never share a unit), modulo
/// the cache size: keys allocated one after another (a record's, or a
/// decoded hash's, in one chunk) get distinct slots.
#[inline]
pub(super) fn key_slot(addr: usize) -> usize {
    (addr >> 4) & (KEY_CACHE - 1)
}

/// A direct-mapped cache of `(key address, offset)` by [`key_slot`], made
/// at its first entry; clearing it touches only the slots used since the
/// last clearing, so a small document costs a small clearing.
#[derive(Default)]
pub(super) struct KeyCache {
    slots: Option<Box<[(usize, u64); KEY_CACHE]>>,
    used: Vec<u16>,
}

impl KeyCache {
    /// The entry in `slot`, `(0, 0)` when empty.
    #[inline]
    pub fn get(&self, slot: usize) -> (usize, u64) {
        self.slots.as_ref().map_or((0, 0), |s| s[slot])
    }

    /// Sets the entry in `slot`.
    #[inline]
    pub fn set(&mut self, slot: usize, entry: (usize, u64)) {
        let slots = self
            .slots
            .get_or_insert_with(|| Box::new([(0, 0); KEY_CACHE]));
        if slots[slot].0 == 0 && self.used.len() < KEY_CACHE / 4 {
            self.used.push(slot as u16);
        }
        slots[slot] = entry;
    }

    /// Empties every slot.
    pub fn clear(&mut self) {
        if let Some(slots) = &mut self.slots {
            if self.used.len() < KEY_CACHE / 4 {
                for &i in &self.used {
                    slots[usize::from(i)] = (0, 0);
                }
            } else {
                slots.fill((0, 0));
            }
        }
        self.used.clear();
    }
}

/// The encoder's per-document state, kept between documents so its tables'
/// memory is reused.
#[derive(Default)]
pub(super) struct Seen {
    /// Tracked nodes: body offset of their first writing.
    pub refs: AddrMap,
    /// Nodes with weak references: offset of the WEAKEN of the only-weak
    /// path so far, or 0 once reached strongly. Cells of Perl's immortals
    /// are all one scalar, keyed by its tag (below [`IMMORTAL_KEYS`]), not
    /// by an address.
    pub weak: AddrMap,
    /// Hash keys that may repeat: offset of their first writing.
    pub keys: AddrMap,
    /// A direct-mapped cache in front of `keys`.
    pub key_cache: KeyCache,
    /// Class names: offset of their first writing.
    pub classes: AddrMap,
    /// Blessed non-container referents already written with their class.
    pub objects: AddrMap,
    pub dedupe: Dedupe,
    /// With `dedupe_strings`: the strings written as the bodies of nodes
    /// held more than once, by body offset, with how many of the node's
    /// references are still to be written. Perl's decoder reads a `COPY`
    /// of a tracked string as the string that offset names from then on,
    /// so a `COPY` of one is written only once nothing can refer to it again.
    pub copy_targets: HashMap<usize, usize, AddrHasher>,
}

/// What one body's writing keeps alive: from the first callback on, every
/// node and key the seen tables name (frozen objects included), so no
/// address in a table can be reused by a new node.
#[derive(Default)]
pub(super) struct Retained {
    /// Whether a callback has run in this body.
    pub on: bool,
    /// The objects whose FREEZE handler ran, by address.
    frozen: AddrSet,
    /// FREEZE values once written: their object is always tracked, so a
    /// later reference to it is a back-reference to them. Dropped at the
    /// next callback boundary (their drop may run user code, which must
    /// find the containers being written locked) or with the body.
    released: Vec<Vec<crate::Value>>,
    nodes: Vec<NodeRc>,
    keys: Vec<Key>,
}

/// The memory of a [`Retained`] between bodies: its tables, empty, the
/// vectors as plain words, so that the encoder keeping them for the next
/// document holds no handle and may move to another thread.
#[derive(Default)]
pub(super) struct Spare {
    frozen: AddrSet,
    released: Vec<[usize; 3]>,
    nodes: Vec<usize>,
    keys: Vec<usize>,
}

/// `v`, emptied, as a vector of `U` over the same allocation: `T` and `U`
/// have one size and alignment.
fn reuse<T, U>(mut v: Vec<T>) -> Vec<U> {
    const {
        assert!(
            std::mem::size_of::<T>() == std::mem::size_of::<U>()
                && std::mem::align_of::<T>() == std::mem::align_of::<U>()
        )
    };
    v.clear();
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: the allocation was made for `capacity` values of `T`, which
    // is the same layout as `capacity` values of `U`; the length is 0, so
    // no value of either type is read.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<U>(), 0, v.capacity()) }
}

/// The `weak` table's keys for cells of Perl's immortals are their tags,
/// which are below this; no node lives at such an address.
pub(super) const IMMORTAL_KEYS: usize = 256;

/// A new strong handle on the node at `addr`.
///
/// # Safety
/// `addr` must be [`Addr::node`] of a live node.
unsafe fn node_handle(addr: Addr) -> NodeRc {
    let p = addr.0.cast::<Node>();
    NodeRc::increment_strong_count(p);
    NodeRc::from_raw(p)
}

impl Seen {
    /// Forgets everything.
    pub fn clear(&mut self) {
        self.refs.clear();
        self.weak.clear();
        self.keys.clear();
        self.key_cache.clear();
        self.classes.clear();
        self.objects.clear();
        self.dedupe.clear();
        self.copy_targets.clear();
    }
}

impl Retained {
    /// An empty `Retained` over the memory `spare` kept.
    pub fn from_spare(spare: &mut Spare) -> Retained {
        Retained {
            on: false,
            frozen: std::mem::take(&mut spare.frozen),
            released: reuse(std::mem::take(&mut spare.released)),
            nodes: reuse(std::mem::take(&mut spare.nodes)),
            keys: reuse(std::mem::take(&mut spare.keys)),
        }
    }

    /// Releases everything this kept alive, and gives its memory back to
    /// `spare`.
    pub fn into_spare(self, spare: &mut Spare) {
        let Retained {
            mut frozen,
            released,
            nodes,
            keys,
            ..
        } = self;
        frozen.clear();
        spare.frozen = frozen;
        spare.released = reuse(released);
        spare.nodes = reuse(nodes);
        spare.keys = reuse(keys);
    }

    /// Whether the FREEZE handler of the object at `addr` ran.
    pub fn is_frozen(&self, addr: Addr) -> bool {
        self.frozen.contains(&addr)
    }

    /// Records that the FREEZE handler of the object `rc` holds ran, and
    /// keeps the object alive.
    pub fn set_frozen(&mut self, rc: &NodeRc) {
        self.frozen.insert(Addr::node(rc));
        self.node(rc);
    }

    /// Lets FREEZE values go once written: see `released`.
    pub fn release(&mut self, values: Vec<crate::Value>) {
        self.released.push(values);
    }

    /// Drops the FREEZE values released since the last call, if any, and
    /// says whether there were; called where the containers being written
    /// are locked.
    pub fn drop_released(&mut self) -> bool {
        let any = !self.released.is_empty();
        self.released.clear();
        any
    }

    /// Called before the first callback of a body: keeps every node and key
    /// named by a table of `seen` alive until the body is written.
    pub fn start(&mut self, seen: &Seen) {
        if self.on {
            return;
        }
        self.on = true;
        let nodes = seen
            .refs
            .keys()
            .chain(seen.weak.keys().filter(|a| a.0.addr() >= IMMORTAL_KEYS))
            .chain(seen.objects.keys());
        // SAFETY: before the first callback no user code has run, so every
        // node these tables name is still alive.
        self.nodes.extend(nodes.map(|&a| unsafe { node_handle(a) }));
        let keys = seen.keys.keys().chain(seen.classes.keys());
        // SAFETY: as above, for the keys.
        self.keys
            .extend(keys.map(|a| unsafe { Key::from_ptr(a.0) }));
    }

    /// Records `key` in `seen` as written at `off` unless a key of its
    /// address was recorded already, keeping it alive.
    pub fn note_key(&mut self, seen: &mut Seen, key: Key, off: u64) {
        if let Entry::Vacant(e) = seen.keys.entry(Addr::key(&key)) {
            e.insert(off);
            self.keys.push(key);
        }
    }

    /// Records a node in a table after a callback has run: keeps it alive.
    #[inline]
    pub fn node(&mut self, rc: &NodeRc) {
        if self.on {
            self.nodes.push(rc.clone());
        }
    }

    /// As [`Retained::node`], for a key.
    #[inline]
    pub fn key(&mut self, key: &Key) {
        if self.on {
            self.keys.push(key.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{decode, CallbackPolicy, Encoder, EncoderOptions, Ref, Value};

    /// From the first callback on, the nodes and keys the tables name are
    /// held again from their addresses, and let go with the body. The
    /// handler drops every other handle on a tracked node, a weakly
    /// referenced node, a written blessed scalar, a key written twice and a
    /// class name: the output is what the graph held when written, and
    /// (under Miri) nothing is used after it is freed, and nothing leaks.
    #[test]
    fn a_callback_keeps_what_the_tables_name_alive() {
        for policy in [CallbackPolicy::Guard, CallbackPolicy::Snapshot] {
            let shared = Ref::array(vec![Value::from(1)]);
            let weakly = Ref::array(vec![Value::from(2)]);
            let holder = Ref::array(vec![Value::Ref(weakly.clone())]);
            let h1 = Ref::hash([("kk", Value::Ref(shared.clone()))].into_iter().collect());
            let h2 = Ref::hash([("kk", Value::Ref(shared.clone()))].into_iter().collect());
            let object = Ref::scalar(3).blessed("GoneClass");
            let root = Value::array([
                Value::Ref(h1.clone()),
                Value::Ref(h2.clone()),
                Value::Ref(object.clone()),
                Value::weak(&weakly),
                Value::Ref(holder.clone()),
                Value::Ref(Ref::array(vec![Value::from(0)]).blessed("Dropper")),
            ]);
            let gone = weakly.downgrade();
            drop((shared, weakly));
            let mut enc =
                Encoder::new(EncoderOptions::new().freeze_callbacks(true).policy(policy)).unwrap();
            enc.on_freeze("Dropper", move |_| {
                h1.hash_mut()?.clear();
                h2.hash_mut()?.clear();
                holder.array_mut()?.clear();
                object.unbless();
                Ok(vec![Value::from(0)])
            });
            let bytes = enc.encode(&root).unwrap();
            assert!(gone.upgrade().is_none(), "{policy:?}: the encoder let go");
            let back = decode(&bytes).unwrap().into_value();
            let kk = |i: usize| back.at(i).unwrap().get("kk").unwrap();
            assert!(kk(0).node().unwrap().ptr_eq(&kk(1).node().unwrap()));
            assert_eq!(kk(0).at(0).and_then(|v| v.as_i64()), Some(1));
            let object = back.at(2).unwrap().node().unwrap();
            assert_eq!(object.class().unwrap().as_bytes(), b"GoneClass");
            assert_eq!(back.at(3).unwrap().at(0).and_then(|v| v.as_i64()), Some(2));
        }
    }
}
