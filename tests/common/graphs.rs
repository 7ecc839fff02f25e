//! Random value graphs for the Perl oracles: sharing, cycles, weak
//! references, objects, aliases and every kind of scalar, as Perl's
//! decoder rebuilds them.

use sereal::{Body, Hash, Key, Ref, Value};

/// A new, empty array node.
fn new_array() -> Ref {
    match Value::array(Vec::<Value>::new()) {
        Value::Ref(r) => r,
        _ => unreachable!("Value::array makes a reference"),
    }
}

// -------------------------------------------------------------------- PRNG

/// SplitMix64.
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// The seed of case `i` of a run whose base seed is `base`.
pub fn case_seed(base: u64, i: usize) -> u64 {
    SplitMix(base ^ (i as u64).wrapping_mul(0xD1B5_4A32_D192_ED03)).next()
}

// --------------------------------------------------------- graph generator

/// Builds one random graph. Every handle it keeps (the pools, the ancestor
/// stack) goes away with it, so that after [`Gen::graph`] the reference
/// counts are exactly those of the graph, as Perl's decoder rebuilds them.
pub struct Gen {
    rng: SplitMix,
    /// Nodes already in the graph that may be referred to again.
    pool: Vec<Ref>,
    /// Scalar cells already in the graph that may be aliased again.
    cells: Vec<Ref>,
    /// Nodes being filled (a reference to one makes a cycle).
    ancestors: Vec<Ref>,
    /// Nodes still allowed.
    budget: usize,
}

impl Gen {
    fn new(seed: u64) -> Gen {
        Gen {
            rng: SplitMix(seed),
            pool: Vec::new(),
            cells: Vec::new(),
            ancestors: Vec::new(),
            budget: 0,
        }
    }

    /// A graph and the protocol version to encode it with.
    pub fn graph(seed: u64) -> (Value, u8) {
        let mut g = Gen::new(seed);
        let version = 1 + g.rng.below(5) as u8;
        g.budget = 4 + g.rng.below(60);
        let root = g.value(0);
        assert!(g.ancestors.is_empty());
        drop(g); // the extra handles
        (root, version)
    }

    /// `n` values for the elements of one array, and the protocol version
    /// to encode it with: each a small graph, and later ones refer to
    /// (strongly, weakly, as aliases) the nodes of earlier ones, objects
    /// among them. None refers to the array that holds them.
    pub fn elements(seed: u64, n: usize) -> (Vec<Value>, u8) {
        let mut g = Gen::new(seed);
        let version = 1 + g.rng.below(5) as u8;
        let elements = (0..n)
            .map(|_| {
                g.budget = 1 + g.rng.below(12);
                g.value(1)
            })
            .collect();
        drop(g); // the extra handles
        (elements, version)
    }

    /// A value for an array element or a hash value.
    fn value(&mut self, depth: usize) -> Value {
        self.value_in(depth, true)
    }

    /// A value; a slot that is itself a shared scalar cell (an alias) only
    /// with `slot`. Inside a scalar cell an alias would mean the cell is that
    /// other cell, which a reference to it says already.
    fn value_in(&mut self, depth: usize, slot: bool) -> Value {
        let mut r = self.rng.unit();
        if depth == 0 {
            // The root is a new container or scalar reference.
            r = 0.6 + 0.4 * r;
        } else if depth > 6 || self.budget == 0 || r < 0.3 {
            return self.scalar();
        }
        if r < 0.40 && !self.pool.is_empty() {
            return Value::Ref(self.rng.pick(&self.pool).clone());
        }
        if r < 0.45 && !self.ancestors.is_empty() {
            return Value::Ref(self.rng.pick(&self.ancestors).clone());
        }
        if r < 0.52 && !(self.pool.is_empty() && self.ancestors.is_empty()) {
            let n = self.pool.len() + self.ancestors.len();
            let i = self.rng.below(n);
            let target = if i < self.pool.len() {
                &self.pool[i]
            } else {
                &self.ancestors[i - self.pool.len()]
            };
            return Value::weak(target);
        }
        if r < 0.60 && slot {
            return self.alias(depth);
        }
        self.budget -= 1;
        let node = if r < 0.80 {
            self.array(depth)
        } else if r < 0.94 {
            self.hash(depth)
        } else {
            self.scalar_ref(depth)
        };
        if self.rng.chance(0.15) {
            node.bless(self.class());
        }
        if self.rng.chance(0.3) {
            self.pool.push(node.clone());
        }
        Value::Ref(node)
    }

    fn length(&mut self) -> usize {
        if self.rng.chance(0.05) {
            16 + self.rng.below(4)
        } else {
            self.rng.below(7)
        }
    }

    fn array(&mut self, depth: usize) -> Ref {
        let node = new_array();
        self.ancestors.push(node.clone());
        let n = self.length();
        for _ in 0..n {
            let v = self.value(depth + 1);
            node.array_mut().unwrap().push(v);
        }
        self.ancestors.pop();
        node
    }

    fn hash(&mut self, depth: usize) -> Ref {
        let node = Ref::hash(Hash::new());
        self.ancestors.push(node.clone());
        let n = self.length();
        for _ in 0..n {
            let k = self.key();
            if node.as_hash().unwrap().get_key(&k).is_some() {
                continue;
            }
            let v = self.value(depth + 1);
            node.hash_mut().unwrap().insert(k, v);
        }
        self.ancestors.pop();
        node
    }

    /// A reference to a new scalar cell (`\$x`), which may hold a reference
    /// to itself or an ancestor.
    fn scalar_ref(&mut self, depth: usize) -> Ref {
        let node = Ref::scalar(Value::Undef);
        self.ancestors.push(node.clone());
        let v = self.value_in(depth + 1, false);
        *node.body_mut().unwrap() = Body::Scalar(v);
        self.ancestors.pop();
        if self.rng.chance(0.5) {
            self.cells.push(node.clone());
        }
        node
    }

    /// A slot that is a scalar cell itself, which other slots may share
    /// (Perl's aliasing) and references may point at (`\$a[0]`).
    fn alias(&mut self, depth: usize) -> Value {
        if !self.cells.is_empty() && self.rng.chance(0.6) {
            return Value::Alias(self.rng.pick(&self.cells).clone());
        }
        if self.budget == 0 {
            return self.scalar();
        }
        self.budget -= 1;
        let cell = Ref::scalar(Value::Undef);
        self.ancestors.push(cell.clone());
        let v = if self.rng.chance(0.6) {
            self.scalar()
        } else {
            self.value_in(depth + 1, false)
        };
        *cell.body_mut().unwrap() = Body::Scalar(v);
        self.ancestors.pop();
        // Not blessed: Sereal writes a class only where a reference to the
        // node is written, so a blessed cell met only as a slot loses it
        // (in Perl too). Cells made by `scalar_ref` are blessed at times
        // and may be aliased as well.
        self.cells.push(cell.clone());
        if self.rng.chance(0.3) {
            self.pool.push(cell.clone());
        }
        Value::Alias(cell)
    }

    fn class(&mut self) -> Key {
        if self.rng.chance(0.05) {
            Key::utf8("Cls\u{263a}")
        } else {
            Key::bytes(format!("Cls{}", self.rng.below(3)))
        }
    }

    fn key(&mut self) -> Key {
        let r = self.rng.unit();
        let n = self.rng.below(5);
        if r < 0.6 {
            Key::bytes(format!("k{}", self.rng.below(40)))
        } else if r < 0.7 {
            Key::bytes(format!("a_longer_key_name_{}", self.rng.below(10)))
        } else if r < 0.8 {
            Key::utf8(format!("ключ{n}"))
        } else if r < 0.87 {
            Key::utf8(format!("\u{263a}{n}"))
        } else if r < 0.94 {
            Key::utf8(format!("café{n}"))
        } else if r < 0.96 {
            Key::bytes("")
        } else {
            Key::bytes([b"bin\xff".as_slice(), n.to_string().as_bytes()].concat())
        }
    }

    fn text(&mut self, chars: &[char], max: usize) -> String {
        let n = self.rng.below(max + 1);
        (0..n).map(|_| *self.rng.pick(chars)).collect()
    }

    fn scalar(&mut self) -> Value {
        const ASCII: &[char] = &['a', 'b', 'z', 'Q', '0', ' ', '~', '"', '\\', '\n'];
        const LATIN1: &[char] = &['é', 'ü', 'ß', '\u{a0}', 'ÿ', 'a'];
        const WIDE: &[char] = &['☺', 'ж', '€', '中', '😀', 'x', 'é'];
        let r = self.rng.unit();
        match (r * 100.0) as u32 {
            0..=4 => Value::Undef,
            5..=12 => Value::Bool(self.rng.chance(0.5)),
            13..=27 => Value::Int(self.rng.below(32) as i64 - 16),
            28..=35 => {
                let bits = 5 + self.rng.below(58);
                let m = (self.rng.next() >> (64 - bits)) as i64;
                Value::Int(if self.rng.chance(0.5) { -m } else { m })
            }
            36..=39 => self
                .rng
                .pick(&[
                    Value::Int(i64::MIN),
                    Value::Int(i64::MAX),
                    Value::UInt(u64::MAX),
                    Value::UInt(1 << 63),
                    Value::Int(16),
                    Value::Int(-17),
                    Value::Int(1 << 32),
                    Value::Int(-(1 << 32)),
                ])
                .clone(),
            40 => Value::UInt((1 << 63) | self.rng.next()),
            41..=45 => Value::Double(self.rng.unit() * 2e6 - 1e6),
            46..=49 => Value::Double(*self.rng.pick(&[
                0.5,
                -1.25,
                3.0,
                0.1,
                1e300,
                -2.5e-310,
                1.0 / 3.0,
                65504.0,
                -0.0,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NAN,
            ])),
            50..=51 => Value::Float(*self.rng.pick(&[0.25f32, -7.5, 1e-3, 3.4e38])),
            52..=64 => Value::bytes(self.text(ASCII, 40)),
            65..=69 => {
                let n = self.rng.below(13);
                let b: Vec<u8> = (0..n).map(|_| 0x80 | self.rng.next() as u8).collect();
                Value::bytes(b)
            }
            70..=78 => Value::utf8(self.text(WIDE, 20)),
            79..=82 => Value::utf8(self.text(LATIN1, 10)),
            83..=84 => Value::utf8("ascii utf8"),
            85..=89 => Value::bytes("dupdupdup"),
            90..=91 => Value::bytes(""),
            _ => Value::bytes(format!("{}", self.rng.below(1000))),
        }
    }
}
