#!/usr/bin/env python3
"""Writes the conformance corpus documents (srl and canon of every profile)
as seed files for the fuzz targets: fuzz/corpus/<target>/<profile>-<id>-<kind>.
For the `json` target the seeds are the documents' lossless JSON, made by the
CLI (target/release/sereal: `cargo build --release --bin sereal` first); for
the `send` and `thaw` targets each document follows the byte that target
reads its options from (a few values, in turn); `thaw` takes the documents
of the profiles with FREEZE objects, of both corpora; `stream` and `typed_stream` take each record's `srl` and `canon` concatenated
after the byte that says how the stream is cut (a few values, in turn)."""
import base64, json, os, subprocess, sys
root = os.path.dirname(os.path.abspath(__file__))
corpus = os.path.join(root, "..", "tests", "corpus")
for target in sys.argv[1:] or ["decode", "roundtrip"]:
    out = os.path.join(root, "corpus", target)
    os.makedirs(out, exist_ok=True)
    dirs = ["perl-sereal-5.003"] + (["perl-sereal-5.003-wide"] if target == "thaw" else [])
    files = [os.path.join(corpus, d, n) for d in dirs for n in sorted(os.listdir(os.path.join(corpus, d)))]
    for path in files:
        name = os.path.basename(path)
        if not name.endswith(".jsonl.zst") or (target == "thaw" and "freeze" not in name):
            continue
        text = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
        for line in text.decode().splitlines():
            rec = json.loads(line)
            if target in ("stream", "typed_stream"):
                docs = b"".join(base64.b64decode(rec[k]) for k in ("srl", "canon") if rec.get(k))
                cut = (0x00, 0x06, 0x0f, 0x90, 0xff)[rec["id"] % 5]
                with open(os.path.join(out, f"{rec['profile']}-{rec['id']}-pair"), "wb") as f:
                    f.write(bytes([cut]) + docs)
                continue
            for kind in ("srl", "canon"):
                if rec.get(kind):
                    doc = base64.b64decode(rec[kind])
                    if target == "json":
                        cli = os.path.join(root, "..", "target", "release", "sereal")
                        r = subprocess.run([cli, "to-json", "--lossless", "-"], input=doc, capture_output=True)
                        if r.returncode != 0:
                            continue
                        doc = r.stdout
                    if target == "send":
                        doc = bytes([(0x00, 0x01, 0x80, 0x7f)[rec["id"] % 4]]) + doc
                    if target == "thaw":
                        doc = bytes([rec["id"] % 6 | (0x40, 0x80, 0x00)[rec["id"] % 3]]) + doc
                    with open(os.path.join(out, f"{rec['profile']}-{rec['id']}-{kind}"), "wb") as f:
                        f.write(doc)
