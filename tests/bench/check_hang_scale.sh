#!/usr/bin/env bash
# Issue 34's scale case as a test: a generated 1,024-node x 8-rank job (8,192
# ranks, three levels of process groups) that hangs, once on one straggler and
# once on a desync (bench/generate_hang.py), each with every rank's Flight
# Recorder dump. The verdict's hang detail must name the straggler's rank and
# node, and the desync (culprit eval on the labels the generator writes). The
# timings are bench/hang_bench.sh's, not checked here.
#
#   check_hang_scale.sh CULPRIT SOURCE_DIR [NODES]
set -euo pipefail
bin=$1
src=$2
nodes=${3:-1024}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/eval"
for kind in straggler desync; do
  python3 "$src/bench/generate_hang.py" "$work/eval/$kind" --nodes "$nodes" --kind "$kind" --laggard 4711
done
"$bin" eval "$work/eval" --threads 2 --min-match 100 --max-confidently-wrong 0 | tail -3
python3 - "$work/eval/straggler/expected.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))["hang"]
assert h == {"kind": "straggler", "laggard_ranks": [4711], "laggard_nodes": ["gpu00588"]}, h
PY
echo "check_hang_scale: the straggler of 8,192 ranks (rank 4711 on gpu00588) and the desync are located"
