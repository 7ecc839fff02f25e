//! Perl's view of a scalar: numbers read from strings, numbers written as
//! strings, and truth. One set of rules, used by the lenient accessors
//! here ([`Value::to_i64`] and friends) and by both serde deserializers
//! (see the table in the docs of [`de`](crate::de)).

use super::Value;

/// A number read from a string as Perl reads it ([`number`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Number {
    /// Written as an integer (no fraction, no exponent) that fits in 64
    /// bits: non-negative as `U`.
    U(u64),
    /// A negative integer that fits in an `i64`.
    I(i64),
    /// Anything else Perl takes as a number: a fraction, an exponent,
    /// an integer too wide for 64 bits, `Inf`, `NaN`.
    F(f64),
}

impl Number {
    /// The number as an `f64` (an integer rounded to the nearest).
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Number::U(u) => u as f64,
            Number::I(i) => i as f64,
            Number::F(f) => f,
        }
    }
}

/// Whether `b` is Perl's whitespace (`isSPACE`).
fn space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')
}

/// The number the string `s` is, by Perl's `looks_like_number`: optional
/// leading and trailing whitespace, an optional sign, then digits with an
/// optional fraction (`"7"`, `"7."`, `".5"`, `"2.50"`) and an optional
/// exponent (`"1e3"`, `"+.5e-3"`), or `Inf`/`Infinity`/`NaN` in any case,
/// or Perl's `"0 but true"`. Not numbers: `""`, whitespace alone, hex
/// (`"0x10"`), underscores (`"1_000"`), a sign apart from its digits
/// (`"- 7"`), a cut exponent (`"1e"`), trailing text (`"12abc"`), which
/// Perl numifies with a warning (we refuse them).
///
/// This is the one rule for "Perl string to number" in the crate.
pub(crate) fn number(s: &[u8]) -> Option<Number> {
    if s == b"0 but true" {
        return Some(Number::U(0));
    }
    let (t, neg, body) = signed(s)?;
    if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
        return Some(Number::F(if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }));
    }
    if body.eq_ignore_ascii_case(b"nan") {
        return Some(Number::F(f64::NAN));
    }
    let digits = |from: usize| {
        body[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let int = digits(0);
    let mut i = int;
    let mut frac = 0;
    if body.get(i) == Some(&b'.') {
        frac = digits(i + 1);
        i += 1 + frac;
    }
    if int + frac == 0 {
        return None;
    }
    if matches!(body.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(body.get(i + 1), Some(b'+' | b'-')));
        let exp = digits(i + 1 + sign);
        if exp == 0 {
            return None;
        }
        i += 1 + sign + exp;
    }
    if i != body.len() {
        return None;
    }
    // ASCII by construction.
    let text = std::str::from_utf8(t).ok()?;
    if i == int {
        let digits = std::str::from_utf8(&body[..int]).ok()?;
        if let Some(n) = digits.parse().ok().and_then(|u| with_sign(neg, u)) {
            return Some(n);
        }
    }
    text.parse::<f64>().ok().map(Number::F)
}

/// The integer the string `s` is, when [`number`] reads it as a number
/// whose exact value is an integer that fits in 64 bits: `"12"`, `" -5 "`,
/// and also `"2.00"` (a `DECIMAL` column as DBI returns it), `"1e3"`,
/// `"2.5e1"`. `"2.5"` is a fraction; `"abc"` no number; `"1e30"` and
/// `"Inf"` no integer that fits. Decided on the digits, not a float, so
/// `"18446744073709551615.0"` is `u64::MAX` and `"1.0000000000000000001"`
/// a fraction.
pub(crate) fn integer(s: &[u8]) -> Result<Number, NotInteger> {
    match number(s) {
        Some(n @ (Number::U(_) | Number::I(_))) => Ok(n),
        Some(Number::F(_)) => exact_integer(s).ok_or(NotInteger::Fraction),
        None => Err(NotInteger::NotANumber),
    }
}

/// The exact integer a decimal string (one [`number`] read) is: its
/// digits with the point moved by the exponent, when no digit but `0`
/// falls after the point and the rest fits in 64 bits.
fn exact_integer(s: &[u8]) -> Option<Number> {
    let (_, neg, body) = signed(s)?;
    let (mantissa, exp) = match body.iter().position(|&b| b == b'e' || b == b'E') {
        Some(at) => (&body[..at], std::str::from_utf8(&body[at + 1..]).ok()?),
        None => (body, "0"),
    };
    // A digit-free exponent (Inf, NaN) fails to parse; a huge one is no
    // integer that fits.
    let exp: i64 = exp.parse().ok()?;
    if !mantissa.iter().all(|&b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let point = mantissa.iter().position(|&b| b == b'.');
    let int_len = point.unwrap_or(mantissa.len());
    let digits: Vec<u8> = mantissa
        .iter()
        .copied()
        .filter(u8::is_ascii_digit)
        .collect();
    // Where the point falls among the digits once the exponent moves it.
    let at = usize::try_from(i64::try_from(int_len).ok()?.checked_add(exp)?).unwrap_or(0);
    let (whole, fraction) = digits.split_at(at.min(digits.len()));
    if fraction.iter().any(|&d| d != b'0') {
        return None;
    }
    if whole.iter().all(|&d| d == b'0') {
        return Some(Number::U(0));
    }
    let mut u: u64 = 0;
    for &d in whole
        .iter()
        .chain(std::iter::repeat_n(&b'0', at.saturating_sub(digits.len())))
    {
        u = u.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    with_sign(neg, u)
}

/// `s` without Perl's whitespace around it, whether it is negative, and
/// what follows its sign; `None` for nothing but whitespace.
fn signed(s: &[u8]) -> Option<(&[u8], bool, &[u8])> {
    let start = s.iter().position(|&b| !space(b))?;
    let end = s.iter().rposition(|&b| !space(b))? + 1;
    let t = &s[start..end];
    Some(match t.first()? {
        b'-' => (t, true, &t[1..]),
        b'+' => (t, false, &t[1..]),
        _ => (t, false, t),
    })
}

/// The magnitude `u` with its sign, when it fits (`-0` is `0`).
fn with_sign(neg: bool, u: u64) -> Option<Number> {
    match (neg, u) {
        (false, u) | (true, u @ 0) => Some(Number::U(u)),
        (true, u) if u <= 1 << 63 => Some(Number::I((u as i64).wrapping_neg())),
        _ => None,
    }
}

/// Why a string is no integer ([`integer`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum NotInteger {
    /// A number, but not an integer that fits in 64 bits (`"2.5"`,
    /// `"1e30"`).
    Fraction,
    /// Not a number at all (`"abc"`, `""`).
    NotANumber,
}

/// The message for a string an integer or float target cannot take.
#[cfg(feature = "serde")]
pub(crate) fn not_a_number_message(s: &[u8], why: NotInteger) -> String {
    let shown = String::from_utf8_lossy(s);
    match why {
        NotInteger::Fraction => format!("string {shown:?} is not an integer"),
        NotInteger::NotANumber => format!("string {shown:?} is not a number"),
    }
}

/// The float `f` as Perl prints it: `%.15g` (`0.1`, `1e+21`, `3`,
/// `0.333333333333333`), `Inf`, `-Inf` and `NaN`, and `0` for either zero.
pub(crate) fn float_string(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Inf" } else { "-Inf" }.into();
    }
    if f == 0.0 {
        return "0".into();
    }
    // 15 significant digits: the exponent after rounding decides the form.
    let sci = format!("{f:.14e}");
    let (mantissa, exp) = sci.split_once('e').expect("an exponent");
    let exp: i32 = exp.parse().expect("a decimal exponent");
    if !(-4..15).contains(&exp) {
        let m = trim_fraction(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.unsigned_abs())
    } else {
        let fixed = format!("{f:.*}", (14 - exp) as usize);
        trim_fraction(&fixed).to_owned()
    }
}

/// `s` without the trailing zeros of its fraction (and without a `.`
/// left last).
fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// The number `n` as Perl prints it: an integer in decimal, a float by
/// [`float_string`].
#[cfg(feature = "serde")]
pub(crate) fn number_string(n: Number) -> String {
    match n {
        Number::U(u) => u.to_string(),
        Number::I(i) => i.to_string(),
        Number::F(f) => float_string(f),
    }
}

/// Perl's truth of a number: not zero (`NaN` is true, as in Perl).
#[cfg(feature = "serde")]
pub(crate) fn number_truth(n: Number) -> bool {
    match n {
        Number::U(u) => u != 0,
        Number::I(i) => i != 0,
        Number::F(f) => f != 0.0,
    }
}

/// Perl's truth of a string: false for `""` and `"0"`, true otherwise.
pub(crate) fn string_truth(s: &[u8]) -> bool {
    !matches!(s, b"" | b"0")
}

impl Value {
    /// The value as an `i64`, converted as Perl converts a scalar: an
    /// integer that fits, an integral float that fits, or a string that is
    /// an integer in Perl's sense (`"12"`, `" -5 "`, `"2.00"`, `"1e3"`;
    /// not `"2.5"` or `"abc"`). The strict [`Value::as_i64`] takes integers only.
    ///
    /// ```
    /// use sereal::Value;
    /// assert_eq!(Value::from("12").to_i64(), Some(12));
    /// assert_eq!(Value::from("12").as_i64(), None);
    /// assert_eq!(Value::from("2.5").to_i64(), None);
    /// assert_eq!(Value::Double(3.0).to_i64(), Some(3));
    /// ```
    pub fn to_i64(&self) -> Option<i64> {
        match self.perl_number(true)? {
            Number::U(u) => i64::try_from(u).ok(),
            Number::I(i) => Some(i),
            Number::F(f) => integral(f, -9_223_372_036_854_775_808.0, 9_223_372_036_854_775_808.0)
                .map(|f| f as i64),
        }
    }

    /// The value as a `u64`, converted as Perl converts a scalar: as
    /// [`Value::to_i64`], for a number from 0 to `u64::MAX`
    /// (`"18446744073709551615"` included). The strict [`Value::as_u64`]
    /// takes integers only.
    ///
    /// ```
    /// use sereal::Value;
    /// assert_eq!(Value::from("18446744073709551615").to_u64(), Some(u64::MAX));
    /// assert_eq!(Value::from("-1").to_u64(), None);
    /// ```
    pub fn to_u64(&self) -> Option<u64> {
        match self.perl_number(true)? {
            Number::U(u) => Some(u),
            Number::I(_) => None,
            Number::F(f) => integral(f, 0.0, 18_446_744_073_709_551_616.0).map(|f| f as u64),
        }
    }

    /// The value as an `f64`, converted as Perl converts a scalar: any
    /// number, or a string that is a number in Perl's sense (`"2.50"`,
    /// `"1e3"`, `" 7 "`, `"Inf"`). The strict [`Value::as_f64`] takes
    /// numbers only.
    ///
    /// ```
    /// use sereal::Value;
    /// assert_eq!(Value::from("2.50").to_f64(), Some(2.5));
    /// assert_eq!(Value::from("abc").to_f64(), None);
    /// ```
    pub fn to_f64(&self) -> Option<f64> {
        self.perl_number(false).map(Number::as_f64)
    }

    /// The value's truth as Perl has it, for a defined scalar: a boolean
    /// as it is, a number true when it is not zero, a string true unless it
    /// is `""` or `"0"`. `None` for undef, references and the rest. The
    /// strict [`Value::as_bool`] takes the boolean variants only.
    ///
    /// ```
    /// use sereal::Value;
    /// assert_eq!(Value::from("").to_bool(), Some(false));
    /// assert_eq!(Value::from("0.0").to_bool(), Some(true)); // as in Perl
    /// assert_eq!(Value::from(2).to_bool(), Some(true));
    /// assert_eq!(Value::Undef.to_bool(), None);
    /// ```
    pub fn to_bool(&self) -> Option<bool> {
        if let Some(b) = self.as_bool() {
            return Some(b);
        }
        if let Some(t) = self.scalar(|v| v.as_bytes().map(string_truth)) {
            return Some(t);
        }
        self.as_f64().map(|f| f != 0.0)
    }

    /// The value as Perl stringifies a scalar: a string as it is (as text
    /// when its bytes are UTF-8), an integer in decimal, a float by
    /// `%.15g` (`0.1`, `1e+21`, `3`), a boolean `"1"` or `""`. `None` for
    /// undef, references and the rest, and for a string that is not UTF-8.
    ///
    /// ```
    /// use sereal::Value;
    /// assert_eq!(Value::Double(0.1 + 0.2).to_perl_string().as_deref(), Some("0.3"));
    /// assert_eq!(Value::from(12).to_perl_string().as_deref(), Some("12"));
    /// ```
    pub fn to_perl_string(&self) -> Option<String> {
        if let Some(b) = self.as_bool() {
            return Some(if b { "1" } else { "" }.into());
        }
        let text = |b: &[u8]| std::str::from_utf8(b).ok().map(str::to_owned);
        if let Some(text) = self.scalar(|v| v.as_bytes().map(text)) {
            return text;
        }
        if let Some(i) = self.as_i64() {
            return Some(i.to_string());
        }
        if let Some(u) = self.as_u64() {
            return Some(u.to_string());
        }
        self.as_f64().map(float_string)
    }

    /// The value as a Perl number: a number as it is, a string read by
    /// [`number`] (integers only if `int`).
    fn perl_number(&self, int: bool) -> Option<Number> {
        if let Some(i) = self.as_i64() {
            return Some(if i < 0 {
                Number::I(i)
            } else {
                Number::U(i as u64)
            });
        }
        if let Some(u) = self.as_u64() {
            return Some(Number::U(u));
        }
        if let Some(f) = self.as_f64() {
            return Some(Number::F(f));
        }
        self.scalar(|v| match v.as_bytes()? {
            s if int => integer(s).ok(),
            s => number(s),
        })
    }
}

/// `f` when it is an integer in `lo..hi`.
fn integral(f: f64, lo: f64, hi: f64) -> Option<f64> {
    (f.fract() == 0.0 && (lo..hi).contains(&f)).then_some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_perl_reads_them() {
        let n = |s: &str| number(s.as_bytes());
        assert_eq!(n("12"), Some(Number::U(12)));
        assert_eq!(n(" 7 "), Some(Number::U(7)));
        assert_eq!(n("\n7\n"), Some(Number::U(7)));
        assert_eq!(n("+7"), Some(Number::U(7)));
        assert_eq!(n("-0"), Some(Number::U(0)));
        assert_eq!(n("-5"), Some(Number::I(-5)));
        assert_eq!(n("-9223372036854775808"), Some(Number::I(i64::MIN)));
        assert_eq!(n("18446744073709551615"), Some(Number::U(u64::MAX)));
        assert_eq!(
            n("18446744073709551616"),
            Some(Number::F(18446744073709551616.0))
        );
        assert_eq!(n("2.50"), Some(Number::F(2.5)));
        assert_eq!(n("7."), Some(Number::F(7.0)));
        assert_eq!(n(".5"), Some(Number::F(0.5)));
        assert_eq!(n("+.5e-3"), Some(Number::F(0.0005)));
        assert_eq!(n("1e3"), Some(Number::F(1000.0)));
        assert_eq!(n("-Inf"), Some(Number::F(f64::NEG_INFINITY)));
        assert_eq!(n("infinity"), Some(Number::F(f64::INFINITY)));
        assert!(matches!(n("nan"), Some(Number::F(f)) if f.is_nan()));
        assert_eq!(n("0 but true"), Some(Number::U(0)));
        for not in [
            "", "  ", ".", "1e", "- 7", "0x10", "1_000", "12abc", "abc", "+", "1e+",
        ] {
            assert_eq!(n(not), None, "{not:?}");
        }
    }

    #[test]
    fn integers_are_exact() {
        let i = |s: &str| integer(s.as_bytes());
        assert_eq!(i("12"), Ok(Number::U(12)));
        assert_eq!(i(" 2.00 "), Ok(Number::U(2)));
        assert_eq!(i("-2.0"), Ok(Number::I(-2)));
        assert_eq!(i("-0.0"), Ok(Number::U(0)));
        assert_eq!(i("1e3"), Ok(Number::U(1000)));
        assert_eq!(i("2.5e1"), Ok(Number::U(25)));
        assert_eq!(i("2500e-2"), Ok(Number::U(25)));
        assert_eq!(i(".5e1"), Ok(Number::U(5)));
        assert_eq!(i("0e999999999999"), Ok(Number::U(0)));
        assert_eq!(i("18446744073709551615.0"), Ok(Number::U(u64::MAX)));
        assert_eq!(i("1.8446744073709551615e19"), Ok(Number::U(u64::MAX)));
        assert_eq!(i("-9.223372036854775808e18"), Ok(Number::I(i64::MIN)));
        for frac in [
            "2.5",
            "1e-1",
            "1.0000000000000000001",
            "18446744073709551616.0",
            "-9223372036854775809.0",
            "1e30",
            "1e99999999999999999999",
            "Inf",
            "NaN",
            "0 but false",
        ] {
            assert!(i(frac).is_err(), "{frac:?}");
        }
        assert_eq!(i("abc"), Err(NotInteger::NotANumber));
        assert_eq!(i("2.5"), Err(NotInteger::Fraction));
    }

    #[test]
    fn floats_as_perl_prints_them() {
        let cases = [
            (0.1 + 0.2, "0.3"),
            (1e21, "1e+21"),
            (3.0, "3"),
            (1e15, "1e+15"),
            (1e14, "100000000000000"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.333333333333333"),
            (-0.0, "0"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (-2.5, "-2.5"),
            (123456789.125, "123456789.125"),
            (f64::INFINITY, "Inf"),
            (f64::NEG_INFINITY, "-Inf"),
            (f64::NAN, "NaN"),
            (1.5e300, "1.5e+300"),
        ];
        for (f, s) in cases {
            assert_eq!(float_string(f), s, "{f:e}");
        }
    }
}
