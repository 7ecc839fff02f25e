//! `show`: a document in Perl's own notation, as Data::Dumper prints it
//! (with `$Data::Dumper::Indent = 1` and `$Data::Dumper::Sortkeys = 1`):
//! `$VAR1 = ...;`, `bless( ..., 'Class' )`, and a node met again written as
//! the path where it was first printed (`$VAR1->[0]{'group'}`). What Perl's
//! notation cannot say is a comment at the end of the line: `# weak`,
//! `# utf8` (a UTF-8 string of ASCII text), `# alias`. The printer is the
//! library's, [`sereal::Dumper`], which `Display` for a value also uses.

use crate::input::{Doc, Res, Stop};
use sereal::{Body, Ref};
use std::io::Write;

/// Prints one document (or with `header` its user header data) as
/// `$VARn = ...;`, n being the document's number in its input.
pub fn show(doc: &Doc, header: bool, out: &mut dyn Write) -> Res<usize> {
    let dec = crate::input::decoder();
    let fail = |e| doc.error(&e);
    let user = dec.decode_header(doc.bytes).map_err(fail)?;
    let (body, used) = dec.decode_prefix(doc.bytes).map_err(fail)?;
    let root = if header {
        user.as_ref().ok_or_else(|| {
            Stop::Msg(format!(
                "error: {} has no user header data",
                doc.heading(Some(used))
                    .unwrap_or_else(|| "the document".into())
            ))
        })?
    } else {
        &body
    };
    if let Some(label) = doc.heading(Some(used)) {
        writeln!(out, "# {label}")?;
    }
    let name = format!("$VAR{}", doc.index);
    writeln!(out, "{:#}", root.dumper().var(&name))?;
    Ok(used)
}

/// A node's identity: the address of its body, which lives in the node.
pub fn id(r: &Ref) -> usize {
    &*r.body() as *const Body as usize
}

/// Whether more than one handle reaches the node (only those are tracked).
pub fn shared(r: &Ref) -> bool {
    r.strong_count() > 1 || r.weak_count() > 0
}
