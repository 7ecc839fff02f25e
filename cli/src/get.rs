//! `get`: the values a path selects in each document, found with the
//! library's view (`sereal::view`), which walks the tags to them and
//! decodes only what it prints.

use crate::input::{msg, Doc, Res};
use sereal::view::Path;
use sereal::ErrorKind;
use std::io::Write;

/// How `get` prints what it finds.
pub struct Get {
    /// Perl's notation instead of JSON.
    pub perl: bool,
    /// As `to-json --max-repeat`.
    pub max_repeat: u64,
}

/// The path given on the command line, parsed; a malformed one is an
/// error that shows where, with a caret under the offset the library
/// names.
pub fn parse_path(text: &str) -> Res<Path> {
    Path::parse(text).or_else(|e| match e.kind() {
        ErrorKind::BadPath(at, _) => {
            // the offset counts bytes; the caret goes under its character
            let column = text.get(..*at).map_or(0, |t| t.chars().count());
            msg(format!("error: {e}\n  {text}\n  {}^", " ".repeat(column)))
        }
        _ => msg(format!("error: {e}")),
    })
}

/// Prints what `path` selects in one document, one value per line, as
/// plain JSON on one line or in Perl's notation; counts them in `found`.
pub fn get(doc: &Doc, path: &Path, o: &Get, found: &mut usize, out: &mut dyn Write) -> Res<usize> {
    let dec = crate::input::decoder();
    let (view, len) = doc.view(&dec)?;
    let fail = |e| doc.named_error(&e, Some(len));
    for item in view.select_path(path).map_err(fail)? {
        let value = item.decode().map_err(fail)?;
        if o.perl {
            writeln!(out, "{value}")?;
        } else {
            crate::convert::write_plain(&mut *out, &value, true, o.max_repeat)?;
            writeln!(out)?;
        }
        *found += 1;
    }
    Ok(len)
}
