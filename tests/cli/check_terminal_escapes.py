#!/usr/bin/env python3
"""Text meant for a terminal never carries a control character from the
input (issue 38): a workload id, an evidence line or a path holding ESC,
OSC, BEL, CR or LF is printed escaped (\\x1b, \\x07, \\r, \\n), by
`diagnose --format text`, by `run`'s text stdout and progress lines, and in
error messages that quote input. JSON output is escaped by JSON itself.

  tests/cli/check_terminal_escapes.py BIN        (run from the repository root)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="culprit-escapes-")
HOSTILE_ID = "60101\u001b]0;PWNED\u0007\nFAKE line\r\u009b2J"
failures = []


def expect(cond, msg):
    if not cond:
        failures.append(msg)
        print(f"FAIL {msg}", file=sys.stderr)


def controls(text):
    """The C0, DEL and C1 control characters of `text`, but the line feeds
    between lines and the report's own colour codes (there are none here:
    --color never)."""
    return sorted({c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F})


def run(args):
    p = subprocess.run([BIN, *args], capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def hostile_bundle():
    b = os.path.join(TMP, "b")
    shutil.copytree("examples/xid48-dbe", b)
    p = os.path.join(b, "context.json")
    with open(p) as f:
        c = json.load(f)
    c["workload_id"] = HOSTILE_ID
    with open(p, "w") as f:
        json.dump(c, f)
    # An evidence line with a screen clear and an OSC 52 clipboard write.
    k = os.path.join(b, "logs", "node-02", "kernel.log")
    with open(k, "rb") as f:
        lines = f.read().split(b"\n")
    lines = [l + b" \x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07" if b"Xid" in l else l for l in lines]
    with open(k, "wb") as f:
        f.write(b"\n".join(lines))
    return b


b = hostile_bundle()

# diagnose --format text: the id and the evidence escaped, no forged line.
rc, out, err = run(["diagnose", b, "--format", "text", "--color", "never", "--width", "0", "--cascade"])
expect(rc == 0, f"diagnose --format text: exit {rc}: {err[-400:]}")
expect(controls(out) == [], f"diagnose --format text prints raw controls {controls(out)}")
expect("Workload 60101\\x1b]0;PWNED\\x07\\nFAKE line\\r\\u009b2J" in out, "diagnose --format text: the workload id is not shown escaped")
expect(not any(l.startswith("FAKE line") for l in out.splitlines()), "diagnose --format text: a forged line")
expect("\\x1b[2J\\x1b]52;c;cm0gLXJmIH4=\\x07" in out, "diagnose --format text: the evidence line is not shown escaped")
# JSON keeps the value itself (JSON escapes it).
rc, out, err = run(["diagnose", b, "--format", "json"])
expect(rc == 0 and json.loads(out)["workload"]["id"] == HOSTILE_ID, "diagnose --format json: the id is not kept")

# culprit run: the text stdout and the progress lines on stderr.
cfg = os.path.join(TMP, "c.yaml")
with open(cfg, "w") as f:
    f.write(f'cluster: c1\ndiscovery:\n  static:\n    bundles: "{b}/"\n')
rc, out, err = run(["run", "--config", cfg, "--once", "--store", f"sqlite:{TMP}/s.db", "--format", "text"])
expect(rc in (0, 1), f"run: exit {rc}: {err[-400:]}")
expect("60101\\x1b]0;PWNED\\x07\\nFAKE line" in out, f"run --format text: the key is not shown escaped: {out[:400]!r}")
expect(controls(out) == [], f"run --format text prints raw controls {controls(out)}")
expect(controls(err) == [], f"run's progress lines print raw controls {controls(err)}")
expect(not any(l.startswith("FAKE line") for l in (out + err).splitlines()), "run: a forged line")

# An error message quoting its input.
rc, out, err = run(["diagnose", os.path.join(TMP, "no\u001b]0;PWNED\u0007such"), "--format", "text"])
expect(rc != 0 and "no\\x1b]0;PWNED\\x07such" in err, f"diagnose: the path in the error is not escaped: {err!r}")
expect(controls(err) == [], f"diagnose's error prints raw controls {controls(err)}")
rc, out, err = run(["no\u001b[2Jsuch-command"])
expect(rc != 0 and controls(err) == [], f"an unknown command is echoed with raw controls {controls(err)}")

shutil.rmtree(TMP, ignore_errors=True)
print(f"{len(failures)} failed" if failures else "ok: no control character from the input reaches the terminal")
sys.exit(1 if failures else 0)
