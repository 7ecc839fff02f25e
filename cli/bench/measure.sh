#!/bin/sh
# Time and peak RSS of the inspecting commands on the large document of
# issue 11, against `validate` in the same run:
#   sh cli/bench/measure.sh [DOC.srl]   (default /tmp/sereal-big.srl, made
#                                        by big_document.pl if missing)
# Needs /usr/bin/time (GNU time) and a release build (cargo build --release).
set -e
doc=${1:-/tmp/sereal-big.srl}
bin=${SEREAL:-target/release/sereal}
[ -f "$doc" ] || perl "$(dirname "$0")/big_document.pl" "$doc"
ls -l "$doc"
for cmd in validate info to-json "to-json --compact" "to-json --lossless" validate; do
    echo "== sereal $cmd"
    /usr/bin/time -v $bin $cmd "$doc" 2>&1 >/dev/null |
        grep -E 'Elapsed|Maximum resident|^error'
done
