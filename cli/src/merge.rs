//! `merge` and `split`: documents joined into one, and documents cut into
//! chunks, on their bytes, with the library's `sereal::view::merge` and
//! `sereal::view::Splitter`: no value is built. Both read and check all
//! their input before they write anything.

use crate::input::{self, msg, Part, Res, Stop};
use sereal::view::{merge as merge_documents, MergeOptions, Splitter};
use sereal::{sereal, Compression};
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

/// What `split` writes.
pub struct Split<'a> {
    pub file: &'a Path,
    pub chunk_size: usize,
    pub dir: &'a Path,
    pub protocol: Option<u8>,
    pub compress: Compression,
    pub compress_threshold: usize,
    /// User header data `{"elements_count": N}` in each chunk.
    pub count_header: bool,
}

/// Cuts each document of the input into chunks written to files
/// `chunk-000001.srl`, `chunk-000002.srl`... in the directory; says how
/// many on standard error. Chunks written before a failure are removed.
pub fn split(a: &Split) -> Res<bool> {
    let read = input::read_all(&[a.file.to_owned()], false)?;
    let dec = input::decoder();
    let parts = input::documents(&read, &dec)?;
    let mut splitters = Vec::with_capacity(parts.len());
    let mut elements = 0;
    for part in &parts {
        let fail = |e| part.error(&e);
        let view = dec.view(part.bytes()).map_err(fail)?;
        elements += view.root().len().map_err(fail)?.unwrap_or(0);
        let mut s = Splitter::new(view, a.chunk_size)
            .map_err(fail)?
            .compress(a.compress)
            .compress_threshold(a.compress_threshold);
        if let Some(v) = a.protocol {
            s = s.protocol_version(v);
        }
        if a.count_header {
            s = s.header(|n| sereal!({"elements_count": (n)}));
        }
        splitters.push((part, s));
    }
    prepare_dir(a.dir)?;
    // one chunk holds at least one element: the names sort as numbers
    let width = elements.to_string().len().max(6);
    let mut written = Vec::new();
    if let Err(e) = write_chunks(splitters, a.dir, width, &mut written) {
        for p in &written {
            let _ = std::fs::remove_file(p);
        }
        return Err(e);
    }
    eprintln!(
        "{} chunks written to {} ({elements} elements)",
        written.len(),
        a.dir.display()
    );
    Ok(true)
}

/// The chunk files' names: `chunk-` and the number, `.srl`.
const PREFIX: &str = "chunk-";
const SUFFIX: &str = ".srl";

/// Makes the directory if it is missing; refuses one that holds chunk
/// files already (left over, they would read as part of this split).
fn prepare_dir(dir: &Path) -> Res {
    let fail = |e| Stop::Msg(format!("error: cannot write to {}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(fail)?;
    for entry in std::fs::read_dir(dir).map_err(fail)? {
        let name = entry.map_err(fail)?.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(PREFIX) && name.ends_with(SUFFIX) {
            return msg(format!(
                "error: {} holds chunk files already ({name}); remove them or write to another directory",
                dir.display()
            ));
        }
    }
    Ok(())
}

/// Writes every chunk of every splitter, numbered from 1 across them; the
/// files written are pushed on `written`.
fn write_chunks(
    splitters: Vec<(&Part, Splitter)>,
    dir: &Path,
    width: usize,
    written: &mut Vec<PathBuf>,
) -> Res {
    for (part, splitter) in splitters {
        for chunk in splitter {
            let chunk = chunk.map_err(|e| part.error(&e))?;
            let path = dir.join(format!("{PREFIX}{:0width$}{SUFFIX}", written.len() + 1));
            std::fs::write(&path, &chunk)
                .or_else(|e| msg(format!("error: cannot write {}: {e}", path.display())))?;
            written.push(path);
        }
    }
    Ok(())
}
