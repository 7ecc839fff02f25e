#!/usr/bin/env python3
"""Writes the conformance corpus documents (srl and canon of every profile)
as seed files for the fuzz targets: fuzz/corpus/<target>/<profile>-<id>-<kind>.
For the `json` target the seeds are the documents' lossless JSON, made by the
CLI (target/release/sereal: `cargo build --release --bin sereal` first); for
the `send` target each document follows the byte that target reads its
decoder options from (a few values, in turn)."""
import base64, json, os, subprocess, sys
root = os.path.dirname(os.path.abspath(__file__))
src = os.path.join(root, "..", "tests", "corpus", "perl-sereal-5.003")
for target in sys.argv[1:] or ["decode", "roundtrip"]:
    out = os.path.join(root, "corpus", target)
    os.makedirs(out, exist_ok=True)
    for name in sorted(os.listdir(src)):
        if not name.endswith(".jsonl.zst"):
            continue
        text = subprocess.run(["zstd", "-dc", os.path.join(src, name)], check=True, capture_output=True).stdout
        for line in text.decode().splitlines():
            rec = json.loads(line)
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
                    with open(os.path.join(out, f"{rec['profile']}-{rec['id']}-{kind}"), "wb") as f:
                        f.write(doc)
