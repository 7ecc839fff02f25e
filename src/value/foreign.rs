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
    ///
    /// ```
    /// use sereal::{Foreign, Value};
    /// let f = Foreign::new(std::net::Ipv4Addr::LOCALHOST);
    /// let v = Value::array([Value::Foreign(f)]);
    /// assert!(matches!(v.at(0), Some(Value::Foreign(_))));
    /// assert!(sereal::encode(&v).is_err()); // unless undef_unknown or stringify_unknown
    /// ```
    pub fn new<T: std::any::Any>(data: T) -> Foreign {
        Foreign(Rc::new(data))
    }

    /// The data, if it is a `T`.
    ///
    /// ```
    /// use sereal::Foreign;
    /// use std::time::Duration;
    /// let f = Foreign::new(Duration::from_millis(1500));
    /// assert_eq!(f.downcast_ref::<Duration>(), Some(&Duration::from_millis(1500)));
    /// assert_eq!(f.downcast_ref::<u64>(), None);
    /// ```
    pub fn downcast_ref<T: std::any::Any>(&self) -> Option<&T> {
        // Through the `Rc`: `Opaque` is implemented for the `Rc` too.
        Opaque::as_any(&*self.0).downcast_ref()
    }

    /// The Rust type name of the data.
    ///
    /// ```
    /// use sereal::Foreign;
    /// assert_eq!(Foreign::new(7u8).type_name(), "u8");
    /// assert_eq!(Foreign::new(vec![1u8]).type_name(), std::any::type_name::<Vec<u8>>());
    /// ```
    pub fn type_name(&self) -> &'static str {
        Opaque::type_name(&*self.0)
    }

    /// Whether two handles are on the same data.
    ///
    /// ```
    /// use sereal::Foreign;
    /// let a = Foreign::new(1u8);
    /// assert!(a.ptr_eq(&a.clone())); // clones share the data
    /// assert!(!a.ptr_eq(&Foreign::new(1u8)));
    /// ```
    pub fn ptr_eq(&self, other: &Foreign) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for Foreign {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "foreign({})", self.type_name())
    }
}
