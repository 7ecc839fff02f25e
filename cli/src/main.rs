//! `sereal`: inspect, convert, validate and check Sereal documents.

mod check;
mod convert;
mod get;
mod input;
mod inspect;
mod merge;
mod rules;
mod show;
mod walk;

use clap::{Parser, Subcommand, ValueEnum};
use input::{Doc, Output, Res, Stop};
use sereal::view::MergeOptions;
use sereal::Compression;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const EXAMPLES: &str = "\
Examples:
  sereal info doc.srl                         header, sizes and counts
  sereal info a.srl b.srl queue-dump.srl      several files, concatenated documents
  sereal dump doc.srl                         one line per tag, with offsets
  sereal show doc.srl                         the data in Perl's notation (Data::Dumper)
  sereal to-json doc.srl                      the data as plain JSON
  sereal to-json --lossless doc.srl -o doc.json
  sereal from-json --lossless doc.json -o again.srl
  echo '{\"id\": [1, 2]}' | sereal from-json --compress zstd - > doc.srl
  sereal validate cache/*.srl
  base64 -d blob.b64 | sereal info            (or: sereal info --base64 blob.b64)
  sereal get '$.users[*].name' doc.srl        the values a path selects, as JSON
  sereal merge a.srl b.srl -o both.srl        one document: an array of the inputs
  sereal split big.srl --chunk-size 65536 -o chunks/

The inspecting commands (info, dump, show, to-json, validate, get) take several files,
read standard input when given none or `-`, and read each document of a file
of concatenated documents in turn, numbered, with its offset. ASCII whitespace
after the last document (such as the newline `redis-cli --raw` ends its output
with) is not a document and is ignored. Bad input gets `error at offset N: ...`
and exit status 1.";

/// The inputs of an inspecting command.
#[derive(clap::Args)]
struct Inputs {
    /// Files of one or more concatenated documents (`-` or none: standard
    /// input).
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The input is base64 text of the documents (whitespace ignored;
    /// offsets count in the decoded bytes).
    #[arg(long)]
    base64: bool,
}

/// How far plain JSON may write shared nodes out again.
#[derive(clap::Args)]
struct Repeat {
    /// Plain JSON writes a node shared in the document out again at
    /// each meeting, so a small document can stand for a huge text: at
    /// most this many values are written again (0: no limit). A tree,
    /// however large, writes none again.
    #[arg(long, value_name = "N", default_value_t = 10_000_000)]
    max_repeat: u64,
}

/// How a document written from others' bytes is compressed.
#[derive(clap::Args)]
struct Compressing {
    /// Body compression.
    #[arg(long, value_enum, default_value = "none")]
    compress: Compress,
    /// With --compress: bodies shorter than this many bytes stay
    /// uncompressed (as Perl's Sereal).
    #[arg(long, value_name = "BYTES", default_value_t = 1024)]
    compress_threshold: usize,
}

#[derive(Parser)]
#[command(
    name = "sereal",
    version,
    about = "Inspect, convert, validate and check Sereal documents",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The most memory one document's decode may hold beyond the input,
    /// in bytes (0: no limit). The default, 256 MiB, is the library's: it
    /// refuses a small document that would decode into gigabytes (a
    /// compressed body of millions of zeros); raise it for very large
    /// documents.
    #[arg(long, global = true, value_name = "BYTES")]
    max_memory: Option<usize>,
}

#[derive(Subcommand)]
enum Command {
    /// Summarize a document: version, type, sizes, counts.
    ///
    /// Prints the protocol version, document type, compression and ratio,
    /// header size, whether there is user header data, body size, and counts
    /// of values, hash keys, nesting depth, tracked items, back-references,
    /// objects and weak references. Exits 1 (after the summary) if the document does not decode.
    #[command(after_help = "Example:\n  sereal info doc.srl\n  curl -s $URL | sereal info -")]
    Info {
        #[command(flatten)]
        inputs: Inputs,
    },
    /// List a document's body, one tag per line.
    ///
    /// Each line has the body offset (as the
    /// format counts them: from 1 at the body's first byte, or from the
    /// document's start in protocol 1), `*` when the tag's track bit is set
    /// (something refers to it later), the tag name, and its value, length
    /// or count, indented by nesting. REFP, ALIAS, COPY and OBJECTV show the
    /// offset they point to and what is there. Compressed bodies are listed
    /// decompressed.
    #[command(
        after_help = "Example:\n  sereal dump doc.srl | less\n  sereal dump --header doc.srl"
    )]
    Dump {
        #[command(flatten)]
        inputs: Inputs,
        /// List the user header data instead of the body.
        #[arg(long)]
        header: bool,
    },
    /// Show a document in Perl's notation, as Data::Dumper prints it.
    ///
    /// `$VAR1 = ...;` (`$VARn` for the nth document of a file), with
    /// Data::Dumper's `Indent = 1` and `Sortkeys = 1` layout: hashes `{...}`
    /// with keys sorted, arrays `[...]`, scalar references `\...`,
    /// `bless( ..., 'Class' )`, `qr/.../`. A node met again (shared, or a
    /// cycle) is written as the path where it was first printed, such as
    /// `$VAR1->[0]{'group'}`. Strings: printable ASCII in single quotes,
    /// others in double quotes with escapes; a byte string writes characters
    /// above 0x7F as `\x{..}`, a UTF-8 string as themselves. What Perl's
    /// notation cannot show is a comment at the end of the line: `# weak`
    /// (a weak reference), `# utf8` (a UTF-8 string of ASCII text), `# alias`.
    #[command(
        after_help = "Examples:\n  sereal show doc.srl\n  sereal show --header doc.srl     (the user header data)\n  sereal show queue-dump.srl      ($VAR1, $VAR2, ... one per document)"
    )]
    Show {
        #[command(flatten)]
        inputs: Inputs,
        /// Show the user header data instead of the body.
        #[arg(long)]
        header: bool,
    },
    /// Convert a document to JSON.
    ///
    /// Plain JSON (the default) is for reading: hashes become objects, arrays
    /// arrays, strings strings; references are followed, and classes, weak
    /// references and string kinds dropped. `--lossless` writes everything
    /// the document holds (shared nodes and cycles, weak references, classes,
    /// byte versus UTF-8 strings, exact numbers, aliases, the protocol
    /// version and user header), which `from-json --lossless` turns back into
    /// the same bytes. The sereal repository's docs/json.md describes the
    /// lossless format.
    #[command(
        after_help = "Examples:\n  sereal to-json doc.srl\n  sereal to-json --lossless doc.srl -o doc.json\n  sereal to-json --header doc.srl     (plain JSON of the user header data)"
    )]
    ToJson {
        #[command(flatten)]
        inputs: Inputs,
        /// Write lossless JSON.
        #[arg(long)]
        lossless: bool,
        /// Plain JSON of the user header data instead of the body (lossless
        /// JSON always includes it).
        #[arg(long)]
        header: bool,
        /// One line, no indentation.
        #[arg(long)]
        compact: bool,
        #[command(flatten)]
        repeat: Repeat,
        /// Write to this file instead of standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Convert JSON to a Sereal document.
    ///
    /// Plain JSON (the default) becomes a fresh tree: objects become hashes,
    /// arrays arrays, strings strings (ASCII ones as byte strings, others
    /// UTF-8), integers integers, other numbers doubles. With `--lossless`
    /// the input must be lossless JSON, as `to-json --lossless` writes it;
    /// its protocol version and compression are used unless the options
    /// below say otherwise. Writes the document to standard output (not a
    /// terminal) or to `-o FILE`.
    #[command(
        after_help = "Examples:\n  sereal from-json --lossless doc.json -o doc.srl\n  sereal from-json --protocol 3 --sort-keys data.json > data.srl\n  echo '[1, \"two\"]' | sereal from-json - | sereal dump -"
    )]
    FromJson {
        /// The JSON file (`-` or none: standard input).
        #[arg(default_value = "-")]
        file: PathBuf,
        /// Read lossless JSON.
        #[arg(long)]
        lossless: bool,
        /// Protocol version to write, 1 to 5 (default: the lossless
        /// document's, or 5).
        #[arg(long, value_name = "N")]
        protocol: Option<u8>,
        /// Body compression (default: the lossless document's, or none).
        #[arg(long, value_enum)]
        compress: Option<Compress>,
        /// With --compress: bodies shorter than this many bytes stay
        /// uncompressed (default 1024, as Perl's Sereal).
        #[arg(long, value_name = "BYTES")]
        compress_threshold: Option<usize>,
        /// Compression level: zlib 1 to 10, zstd 1 to 22.
        #[arg(long, value_name = "N")]
        compress_level: Option<i32>,
        /// Write hash keys sorted (Perl's `sort_keys`).
        #[arg(long)]
        sort_keys: bool,
        /// Perl's `canonical`: sorted keys, and `REFN ARRAY`/`REFN HASH`
        /// instead of the short `ARRAYREF_n`/`HASHREF_n` forms.
        #[arg(long)]
        canonical: bool,
        /// Write a repeated string (over 3 bytes) as a COPY of the first
        /// (Perl's `dedupe_strings`).
        #[arg(long)]
        dedupe_strings: bool,
        /// As --dedupe-strings, with ALIAS (Perl's `aliased_dedupe_strings`).
        #[arg(long)]
        aliased_dedupe_strings: bool,
        /// Write every hash key in full (Perl's `no_shared_hashkeys`).
        #[arg(long)]
        no_shared_hashkeys: bool,
        /// Write to this file instead of standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Decode each FILE fully: OK, or the error and its offset.
    ///
    /// Prints one line per document on standard output (a file may hold
    /// several, one after another), or with --quiet only the lines of the
    /// documents that fail. A file stops at its first failing document.
    /// Ends with `N ok, M failed` on standard error: N documents decoded, M
    /// failing documents and inputs that cannot be read. Exits 1 if any
    /// fails. `-` or no file reads stdin.
    #[command(
        after_help = "Examples:\n  sereal validate cache/*.srl\n  sereal validate --quiet queue-dump.srl     (only the failures, and the count)"
    )]
    Validate {
        #[command(flatten)]
        inputs: Inputs,
        /// Print only the documents that fail (the summary line is still
        /// printed).
        #[arg(short, long)]
        quiet: bool,
    },
    /// Print the values a path selects in each document, one per line.
    ///
    /// PATH is in the JSONPath subset of Perl's Sereal::Path: `$` (the
    /// root), `.key`, `['key']`, `[key]`, `[n]`, `[-n]` (from the end),
    /// `[*]` and `.*` (every element or value), `[a:b:step]` (a slice, as
    /// Python's), `[k1,k2]` and `[0,2]` (several). Each step sees through
    /// references and objects, as Perl's `->` does. The documents are not
    /// decoded: each is walked through once, its tags checked as the
    /// decoder checks them, and only what the path selects is decoded and
    /// printed, as compact plain JSON (as `to-json --compact` writes it)
    /// or with --perl in Perl's notation. A document where nothing matches
    /// prints nothing; a malformed path is an error before any input is
    /// read.
    #[command(
        after_help = "Examples:\n  sereal get '$.users[*].name' doc.srl\n  sereal get '$[0:2]' queue-dump.srl        (each document of the file)\n  sereal get --perl '$.users[-1]' doc.srl   (Perl's notation)\n  redis-cli --raw GET key | sereal get '$.id'\n  sereal get -e '$.error' doc.srl > /dev/null || echo 'no error'"
    )]
    Get {
        /// Where the values are: `$.key[0]`...
        path: String,
        #[command(flatten)]
        inputs: Inputs,
        /// Print in Perl's notation (one line each) instead of JSON.
        #[arg(long)]
        perl: bool,
        /// Exit 1 when nothing matched in any document (as errors do).
        #[arg(short, long)]
        exit_status: bool,
        #[command(flatten)]
        repeat: Repeat,
    },
    /// Merge documents into one whose root is an array of theirs.
    ///
    /// Every document of every input (a file of concatenated documents
    /// gives each of its documents) becomes an element of the merged
    /// document's root array, in order; with --flat, each input's root
    /// must be an array, and their elements are joined into one array.
    /// The documents are not decoded: their tags are copied, checked as
    /// the decoder checks them, with their back-references rewritten, so
    /// sharing within each input is kept; strings repeated across inputs
    /// are written once. User header data is not kept. All the inputs are
    /// read before the output is written; the output may not be an input.
    /// Writes to standard output (not a terminal) or to `-o FILE`.
    #[command(
        after_help = "Examples:\n  sereal merge a.srl b.srl -o both.srl        ([A, B])\n  sereal merge --flat a.srl b.srl -o all.srl  (A's elements, then B's)\n  cat queue/*.srl | sereal merge --compress zstd > day.srl"
    )]
    Merge {
        #[command(flatten)]
        inputs: Inputs,
        /// Join the inputs' root arrays: `[1, 2]` and `[3]` merge to `[1,
        /// 2, 3]` (to `[[1, 2], [3]]` without it).
        #[arg(long)]
        flat: bool,
        /// Protocol version to write, at least each input's (default 5).
        #[arg(long, value_name = "N")]
        protocol: Option<u8>,
        #[command(flatten)]
        compressing: Compressing,
        /// Write to this file instead of standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Split a document whose root is an array into chunks of about a size.
    ///
    /// Each chunk is a document whose root is an array of consecutive
    /// elements of the original, in order, written to DIR (made if
    /// missing) as chunk-000001.srl, chunk-000002.srl... (`ls` lists them
    /// in order); a file of several documents splits each in turn. A chunk
    /// is at most --chunk-size bytes (before compression) unless one
    /// element alone is larger. An element that shares a value with an
    /// earlier chunk has its own copy of it. The documents are not decoded,
    /// but cut on their bytes, as Perl's Sereal::Splitter does. Prints the
    /// number of chunks and elements on standard error. Chunks are not
    /// written over: DIR must not hold chunk files already.
    #[command(
        after_help = "Examples:\n  sereal split big.srl --chunk-size 1000000 -o chunks/\n  sereal split big.srl --chunk-size 65536 --count-header --compress zstd -o chunks/\n  sereal get '$[*].id' chunks/*.srl           (the chunks read in order)"
    )]
    Split {
        /// The file (`-`: standard input).
        file: PathBuf,
        /// The largest chunk, in bytes.
        #[arg(long, value_name = "BYTES")]
        chunk_size: usize,
        /// The directory to write the chunks to.
        #[arg(short = 'o', long = "output", value_name = "DIR")]
        dir: PathBuf,
        /// Give each chunk user header data `{"elements_count": N}` (as
        /// Sereal::Splitter's header template with '__$CNT__').
        #[arg(long)]
        count_header: bool,
        /// Protocol version to write, at least the document's (default:
        /// the document's).
        #[arg(long, value_name = "N")]
        protocol: Option<u8>,
        #[command(flatten)]
        compressing: Compressing,
    },
    /// Run the conformance checks on corpus files written by Perl's Sereal.
    ///
    /// The files are zstd-compressed JSON Lines (see tests/corpus/README.md): decode
    /// `canon`, re-encode it with the case's options and require Perl's
    /// exact bytes; decode `srl` as Perl 5.003's decoder did (FREEZE objects
    /// thawed in its order) and require the same graph. Prints each failure
    /// and `N passed, M failed`; exits 1 on any failure.
    ///
    /// Example: sereal conformance tests/corpus/perl-sereal-5.003/*.jsonl.zst
    Conformance {
        /// Corpus files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Compress {
    None,
    Snappy,
    Zlib,
    Zstd,
}

impl From<Compress> for Compression {
    fn from(c: Compress) -> Compression {
        match c {
            Compress::None => Compression::None,
            Compress::Snappy => Compression::Snappy,
            Compress::Zlib => Compression::Zlib,
            Compress::Zstd => Compression::Zstd,
        }
    }
}

/// Runs an inspecting command: `each` on every document of every input.
/// Returns how many inputs failed.
fn inspect_counted(
    inputs: &Inputs,
    output: Option<&Path>,
    mut each: impl FnMut(&Doc, &mut dyn Write) -> Res<usize>,
) -> Res<usize> {
    let mut out = Output::open(output)?;
    let result = input::each_document(&inputs.files, inputs.base64, &mut out, &mut each);
    out.close(matches!(result, Ok(0)))?;
    result
}

/// Runs an inspecting command: whether every document of every input
/// succeeded.
fn inspect(
    inputs: &Inputs,
    output: Option<&Path>,
    each: impl FnMut(&Doc, &mut dyn Write) -> Res<usize>,
) -> Res<bool> {
    inspect_counted(inputs, output, each).map(|failed| failed == 0)
}

fn run(cli: Cli) -> ExitCode {
    let result = match &cli.command {
        Command::Conformance { files } => return check::conformance(files),
        Command::Validate { inputs, quiet } => {
            let mut passed = 0;
            inspect_counted(inputs, None, |doc, out| {
                let used = check::validate(doc, *quiet, out)?;
                passed += 1;
                Ok(used)
            })
            .map(|failed| check::summary(passed, failed))
        }
        Command::Info { inputs } => inspect(inputs, None, inspect::info),
        Command::Dump { inputs, header } => {
            inspect(inputs, None, |doc, out| inspect::dump(doc, *header, out))
        }
        Command::Show { inputs, header } => {
            inspect(inputs, None, |doc, out| show::show(doc, *header, out))
        }
        Command::ToJson {
            inputs,
            lossless,
            header,
            compact,
            repeat,
            output,
        } => {
            let o = convert::ToJson {
                lossless: *lossless,
                header: *header,
                compact: *compact,
                max_repeat: repeat.max_repeat,
            };
            inspect(inputs, output.as_deref(), |doc, out| {
                convert::to_json(doc, &o, out)
            })
        }
        Command::FromJson {
            file,
            lossless,
            protocol,
            compress,
            compress_threshold,
            compress_level,
            sort_keys,
            canonical,
            dedupe_strings,
            aliased_dedupe_strings,
            no_shared_hashkeys,
            output,
        } => {
            let args = convert::FromJsonArgs {
                file,
                lossless: *lossless,
                protocol: *protocol,
                compress: *compress,
                compress_threshold: *compress_threshold,
                compress_level: *compress_level,
                sort_keys: *sort_keys,
                canonical: *canonical,
                dedupe_strings: *dedupe_strings,
                aliased_dedupe_strings: *aliased_dedupe_strings,
                no_shared_hashkeys: *no_shared_hashkeys,
            };
            from_json(&args, output.as_deref())
        }
        Command::Get {
            path,
            inputs,
            perl,
            exit_status,
            repeat,
        } => get::parse_path(path).and_then(|path| {
            let o = get::Get {
                perl: *perl,
                max_repeat: repeat.max_repeat,
            };
            let mut found = 0;
            let ok = inspect(inputs, None, |doc, out| {
                get::get(doc, &path, &o, &mut found, out)
            })?;
            Ok(ok && (found > 0 || !*exit_status))
        }),
        Command::Merge {
            inputs,
            flat,
            protocol,
            compressing: c,
            output,
        } => {
            let mut opts = MergeOptions::new()
                .flat(*flat)
                .compress(c.compress.into())
                .compress_threshold(c.compress_threshold)
                .decoder(input::decoder());
            if let Some(v) = protocol {
                opts = opts.protocol_version(*v);
            }
            merge::merge(inputs, &opts, output.as_deref())
                .and_then(|doc| input::write_document(&doc, output.as_deref()))
        }
        Command::Split {
            file,
            chunk_size,
            dir,
            count_header,
            protocol,
            compressing: c,
        } => merge::split(&merge::Split {
            file,
            chunk_size: *chunk_size,
            dir,
            protocol: *protocol,
            compress: c.compress.into(),
            compress_threshold: c.compress_threshold,
            count_header: *count_header,
        }),
    };
    match result {
        Ok(true) | Err(Stop::BrokenPipe) => ExitCode::SUCCESS,
        Ok(false) | Err(Stop::Failed) => ExitCode::FAILURE,
        Err(Stop::Msg(m)) => {
            eprintln!("{m}");
            ExitCode::FAILURE
        }
    }
}

/// `from-json`: one document, written only if the conversion succeeds.
fn from_json(args: &convert::FromJsonArgs, output: Option<&Path>) -> Res<bool> {
    let mut doc = Vec::new();
    convert::from_json(args, &mut doc)?;
    input::write_document(&doc, output)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(max) = cli.max_memory {
        input::set_decoder_options(sereal::DecoderOptions::new().max_memory(max));
    }
    // Deep documents make deep JSON, which serde_json writes and frees
    // recursively: run on a thread with room for it.
    let worker = std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(move || run(cli));
    match worker {
        Ok(handle) => handle.join().unwrap_or(ExitCode::FAILURE),
        Err(_) => {
            eprintln!("error: cannot start the worker thread");
            ExitCode::FAILURE
        }
    }
}
