//! `Foreign`: Rust data in the graph that the format cannot carry.

use std::rc::Rc;

/// Data of any Rust type in the graph, which Sereal cannot carry.
///
/// ```
/// use sereal::{Encoder, EncoderOptions, Foreign, Value};
/// let v = Value::array([Value::Foreign(Foreign::new(std::time::Duration::from_secs(3)))]);
/// assert!(sereal::encode(&v).is_err());
/// let mut enc = Encoder::new(EncoderOptions::new().undef_unknown(true)).unwrap();
/// assert_eq!(&enc.encode(&v).unwrap()[6..], b"\x41\x25");
/// ```
#[derive(Clone)]
pub struct Foreign(Rc<dyn Opaque>);

/// Any `'static` type, with its name (keeps [`Foreign`] one fat pointer).
trait Opaque: std::any::Any {
    fn type_name(&self) -> &'static str;
    fn as_any(&self) -> &dyn std::any::Any;
}

impl<T: std::any::Any> Opaque for T {
    fn type_name(&self) -> &'static str {
        std::any::type_name::<T>()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Foreign {
    /// Wraps `data`.
    pub fn new<T: std::any::Any>(data: T) -> Foreign {
        Foreign(Rc::new(data))
    }

    /// The data, if it is a `T`.
    pub fn downcast_ref<T: std::any::Any>(&self) -> Option<&T> {
        // Through the `Rc`: `Opaque` is implemented for the `Rc` too.
        Opaque::as_any(&*self.0).downcast_ref()
    }

    /// The Rust type name of the data.
    pub fn type_name(&self) -> &'static str {
        Opaque::type_name(&*self.0)
    }

    /// Whether two handles are on the same data.
    pub fn ptr_eq(&self, other: &Foreign) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for Foreign {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "foreign({})", self.type_name())
    }
}
