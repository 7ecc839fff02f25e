//! `merge`: documents joined into one on their bytes, with the library's
//! `sereal::view::merge`: no value is built. All the input is read and
//! checked before anything is written.

use crate::input::{self, msg, Part, Res};
use sereal::view::{merge as merge_documents, MergeOptions};
use std::path::{Path, PathBuf};

/// The merged document of every document of every input, in order (see
/// `MergeOptions`, whose decoder should be [`input::decoder`]): an input that fails, or that the merge refuses, is
/// named in the error.
pub fn merge(inputs: &crate::Inputs, opts: &MergeOptions, output: Option<&Path>) -> Res<Vec<u8>> {
    refuse_input_as_output(&inputs.files, output)?;
    let read = input::read_all(&inputs.files, inputs.base64)?;
    let dec = input::decoder();
    let parts = input::documents(&read, &dec)?;
    let all: Vec<&[u8]> = parts.iter().map(Part::bytes).collect();
    merge_documents(&all, opts).or_else(|e| {
        // The merge names an input by its number: the first that the
        // merge refuses alone is the one, named here by file and document
        // (unless the options alone are refused, with no input).
        let none: [&[u8]; 0] = [];
        let culprit = merge_documents(&none, opts).ok().and_then(|_| {
            parts
                .iter()
                .find(|p| merge_documents(&[p.bytes()], opts).is_err())
        });
        match culprit {
            Some(part) => Err(part.error(&e)),
            None => msg(format!("error: {e}")),
        }
    })
}

/// Refuses to write `output` when it is one of the inputs (the inputs are
/// read whole before the output is written, but the input would be lost).
fn refuse_input_as_output(files: &[PathBuf], output: Option<&Path>) -> Res {
    let Some(out) = output.filter(|p| p.as_os_str() != "-") else {
        return Ok(());
    };
    // an output that does not exist yet is no input
    let Ok(target) = out.canonicalize() else {
        return Ok(());
    };
    if files
        .iter()
        .any(|f| f.canonicalize().is_ok_and(|f| f == target))
    {
        return msg(format!(
            "error: {} is also an input; write the merged document to another file",
            out.display()
        ));
    }
    Ok(())
}
