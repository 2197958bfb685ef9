#!/usr/bin/env python3
"""The Python baseline peer of bench/run.sh.

Applies every pattern (one per line in PATTERNS, from
`culprit export-patterns --dialect python`) with re.search to every line of
every FILE, the way the reference Python engines work: patterns compiled once,
files read line by line. Counts matching lines and prints throughput.

  python3 bench/python_baseline.py PATTERNS FILE... [--max-bytes N]

--max-bytes stops after N bytes of input (a slice, for big inputs): the
figures are for the bytes actually read, which are printed.
Last line of output (machine-readable):
  python_baseline bytes=B lines=L matched=M seconds=S mb_per_s=X lines_per_s=Y
"""
import argparse
import re
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("patterns")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--max-bytes", type=int, default=0, help="stop after this many input bytes (0: all)")
    a = ap.parse_args()
    with open(a.patterns, encoding="utf-8") as f:
        pats = [re.compile(p) for p in f.read().split("\n") if p]
    searches = [p.search for p in pats]
    nbytes = nlines = matched = 0
    t0 = time.perf_counter()
    done = False
    for path in a.files:
        with open(path, encoding="utf-8", errors="replace", newline="\n") as f:
            for line in f:
                nbytes += len(line)  # characters; the logs are ASCII
                nlines += 1
                line = line.rstrip("\n")
                for s in searches:
                    if s(line):
                        matched += 1
                        break
                if a.max_bytes and nbytes >= a.max_bytes:
                    done = True
                    break
        if done:
            break
    secs = max(time.perf_counter() - t0, 1e-9)
    print(f"{len(pats)} patterns, {nlines} lines, {nbytes / 1e6:.1f} MB in {secs:.2f} s: "
          f"{nlines / secs:,.0f} lines/s, {nbytes / 1e6 / secs:.2f} MB/s, {matched} matching lines")
    print(f"python_baseline bytes={nbytes} lines={nlines} matched={matched} seconds={secs:.4f} "
          f"mb_per_s={nbytes / 1e6 / secs:.4f} lines_per_s={nlines / secs:.1f}")


if __name__ == "__main__":
    sys.exit(main())
