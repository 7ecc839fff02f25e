//! `sereal!`: a [`Value`](crate::Value) written as JSON-like literal text,
//! in the manner of serde_json's `json!`.

/// Builds a [`Value`](crate::Value) from JSON-like text.
///
/// `{...}` is a reference to a new hash and `[...]` a reference to a new
/// array, as Perl's `{...}` and `[...]` are (what [`Value::hash`] and
/// [`Value::array`] build); `null` is `undef`; `true` and `false` are
/// booleans; anything else is a Rust expression turned into a value with
/// `Value::from` (numbers, strings, `Value`s, `Ref`s, `Option`s, ...). Hash
/// keys are string literals or expressions (anything `Into<Key>`; wrap a
/// key that is more than one token in parentheses, as `json!` asks).
/// Hashes keep the order of their entries. Trailing commas are allowed.
///
/// ```
/// use sereal::{sereal, Value};
/// let x = 41;
/// let key = String::from("computed");
/// let v = sereal!({
///     "id": 1,
///     "tags": ["a", "b", [true, false],],
///     "none": null,
///     "n": x + 1,
///     (key): {"deep": [{"er": "yes"}]},
/// });
/// assert!(v.pointer("/tags/1").unwrap() == "b");
/// assert!(v.pointer("/none").unwrap().is_undef());
/// assert!(v.pointer("/n").unwrap() == 42);
/// assert!(v.pointer("/computed/deep/0/er").unwrap() == "yes");
/// assert_eq!(v, Value::hash([
///     ("id", Value::from(1)),
///     ("tags", Value::array([Value::from("a"), Value::from("b"),
///         Value::array([true, false])])),
///     ("none", Value::Undef),
///     ("n", Value::from(42)),
///     ("computed", Value::hash([("deep", Value::array([Value::hash([("er", "yes")])]))])),
/// ]));
/// assert_eq!(sereal!([]), Value::array(Vec::<Value>::new()));
/// assert_eq!(sereal!(null), Value::Undef);
/// ```
///
/// [`Value::hash`]: crate::Value::hash
/// [`Value::array`]: crate::Value::array
#[macro_export]
macro_rules! sereal {
    ($($value:tt)+) => {
        $crate::__sereal_internal!($($value)+)
    };
}

/// The token muncher behind [`sereal!`]; not part of the API.
#[macro_export]
#[doc(hidden)]
macro_rules! __sereal_internal {
    // ---- array elements: (@array [done elements,] rest) ----
    (@array [$($elems:expr,)*]) => {
        ::std::vec![$($elems,)*]
    };
    (@array [$($elems:expr),*]) => {
        ::std::vec![$($elems),*]
    };
    (@array [$($elems:expr,)*] null $($rest:tt)*) => {
        $crate::__sereal_internal!(@array [$($elems,)* $crate::__sereal_internal!(null)] $($rest)*)
    };
    (@array [$($elems:expr,)*] true $($rest:tt)*) => {
        $crate::__sereal_internal!(@array [$($elems,)* $crate::__sereal_internal!(true)] $($rest)*)
    };
    (@array [$($elems:expr,)*] false $($rest:tt)*) => {
        $crate::__sereal_internal!(@array [$($elems,)* $crate::__sereal_internal!(false)] $($rest)*)
    };
    (@array [$($elems:expr,)*] [$($array:tt)*] $($rest:tt)*) => {
        $crate::__sereal_internal!(@array [$($elems,)* $crate::__sereal_internal!([$($array)*])] $($rest)*)
    };
    (@array [$($elems:expr,)*] {$($hash:tt)*} $($rest:tt)*) => {
        $crate::__sereal_internal!(@array [$($elems,)* $crate::__sereal_internal!({$($hash)*})] $($rest)*)
    };
    (@array [$($elems:expr,)*] $next:expr, $($rest:tt)*) => {
        $crate::__sereal_internal!(@array [$($elems,)* $crate::__sereal_internal!($next),] $($rest)*)
    };
    (@array [$($elems:expr,)*] $last:expr) => {
        $crate::__sereal_internal!(@array [$($elems,)* $crate::__sereal_internal!($last)])
    };
    (@array [$($elems:expr),*] , $($rest:tt)*) => {
        $crate::__sereal_internal!(@array [$($elems,)*] $($rest)*)
    };

    // ---- hash entries: (@hash name (key tokens) (rest) (copy of rest)) ----
    (@hash $hash:ident () () ()) => {};
    // An entry, then a comma.
    (@hash $hash:ident [$($key:tt)+] ($value:expr) , $($rest:tt)*) => {
        let _ = $hash.insert($($key)+, $value);
        $crate::__sereal_internal!(@hash $hash () ($($rest)*) ($($rest)*));
    };
    // The last entry.
    (@hash $hash:ident [$($key:tt)+] ($value:expr)) => {
        let _ = $hash.insert($($key)+, $value);
    };
    (@hash $hash:ident ($($key:tt)+) (: null $($rest:tt)*) $copy:tt) => {
        $crate::__sereal_internal!(@hash $hash [$($key)+] ($crate::__sereal_internal!(null)) $($rest)*);
    };
    (@hash $hash:ident ($($key:tt)+) (: true $($rest:tt)*) $copy:tt) => {
        $crate::__sereal_internal!(@hash $hash [$($key)+] ($crate::__sereal_internal!(true)) $($rest)*);
    };
    (@hash $hash:ident ($($key:tt)+) (: false $($rest:tt)*) $copy:tt) => {
        $crate::__sereal_internal!(@hash $hash [$($key)+] ($crate::__sereal_internal!(false)) $($rest)*);
    };
    (@hash $hash:ident ($($key:tt)+) (: [$($array:tt)*] $($rest:tt)*) $copy:tt) => {
        $crate::__sereal_internal!(@hash $hash [$($key)+] ($crate::__sereal_internal!([$($array)*])) $($rest)*);
    };
    (@hash $hash:ident ($($key:tt)+) (: {$($inner:tt)*} $($rest:tt)*) $copy:tt) => {
        $crate::__sereal_internal!(@hash $hash [$($key)+] ($crate::__sereal_internal!({$($inner)*})) $($rest)*);
    };
    (@hash $hash:ident ($($key:tt)+) (: $value:expr , $($rest:tt)*) $copy:tt) => {
        $crate::__sereal_internal!(@hash $hash [$($key)+] ($crate::__sereal_internal!($value)) , $($rest)*);
    };
    (@hash $hash:ident ($($key:tt)+) (: $value:expr) $copy:tt) => {
        $crate::__sereal_internal!(@hash $hash [$($key)+] ($crate::__sereal_internal!($value)));
    };
    // A key in parentheses.
    (@hash $hash:ident () (($key:expr) : $($rest:tt)*) $copy:tt) => {
        $crate::__sereal_internal!(@hash $hash ($key) (: $($rest)*) (: $($rest)*));
    };
    // One more token of the key.
    (@hash $hash:ident ($($key:tt)*) ($tt:tt $($rest:tt)*) $copy:tt) => {
        $crate::__sereal_internal!(@hash $hash ($($key)* $tt) ($($rest)*) ($($rest)*));
    };

    // ---- values ----
    (null) => {
        $crate::Value::Undef
    };
    (true) => {
        $crate::Value::from(true)
    };
    (false) => {
        $crate::Value::from(false)
    };
    ([]) => {
        $crate::Value::array(::std::vec::Vec::<$crate::Value>::new())
    };
    ([ $($tt:tt)+ ]) => {
        $crate::Value::array::<$crate::Value>($crate::__sereal_internal!(@array [] $($tt)+))
    };
    ({}) => {
        $crate::Value::from($crate::Hash::new())
    };
    ({ $($tt:tt)+ }) => {
        $crate::Value::from({
            let mut hash = $crate::Hash::new();
            $crate::__sereal_internal!(@hash hash () ($($tt)+) ($($tt)+));
            hash
        })
    };
    ($other:expr) => {
        $crate::Value::from($other)
    };
}
