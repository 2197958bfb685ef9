#!/usr/bin/env python3
"""Bad input against the culprit command line: each case is one of the
defects of issue 12 (the number in its name), and must get a clear message
and a non-zero exit (or, for evidence that cannot be read, a verdict whose
coverage says so), quickly, never a crash, a hang or unbounded memory.

  tests/cli/check_robustness.py BIN        (run from the repository root)

Every case runs, then the failures are listed; exit 1 if there was one.
Each command runs under a time limit and an address-space limit (2 GiB by
default; CULPRIT_TEST_AS_LIMIT_MB, 0 for none: sanitizer builds reserve far
more), so a hang or a memory blow-up is a failure, not a stuck CI job.
"""
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

BIN = os.path.abspath(sys.argv[1])
ROOT = os.getcwd()
TMP = tempfile.mkdtemp(prefix="culprit-robustness-")
os.chmod(TMP, 0o755)
AS_LIMIT_MB = int(os.environ.get("CULPRIT_TEST_AS_LIMIT_MB", "2048"))
failures = []
passed = 0


def limits():
    if AS_LIMIT_MB:
        resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT_MB << 20, AS_LIMIT_MB << 20))


class Run:
    def __init__(self, args, timeout=60, user=None):
        cmd = [BIN, *args]
        if user is not None:
            cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
        t0 = time.time()
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=timeout, preexec_fn=limits)
            self.status, self.out, self.err = p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired as e:
            self.status, self.out, self.err = "timeout", "", f"no answer within {timeout} s"
        self.seconds = time.time() - t0
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        # CPU time of the run: a resource bound that the machine's load does
        # not inflate as it does wall time (a killed run is not counted, and
        # fails by its status "timeout").
        self.cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)

    def verdict(self):
        return json.loads(self.out)

    def __str__(self):
        return f"exit {self.status} after {self.seconds:.1f}s ({self.cpu:.1f}s CPU); stderr: {self.err[-600:]!r}"


def case(name):
    def wrap(fn):
        global passed
        try:
            fn()
            passed += 1
            print(f"ok   {name}")
        except AssertionError as e:
            failures.append(f"{name}: {e}")
            print(f"FAIL {name}: {e}", file=sys.stderr)
        except Exception as e:  # a broken test is a failure too
            failures.append(f"{name}: {type(e).__name__}: {e}")
            print(f"FAIL {name}: {type(e).__name__}: {e}", file=sys.stderr)
        return fn
    return wrap


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


# `seconds` bounds the CPU time of the run (memory is bounded by RLIMIT_AS
# above, a hang by the run's timeout); wall time is printed when it exceeds
# the bound, never asserted, since it measures the machine's load.
def refused(r, needle, status=2, seconds=30):
    expect(r.status == status, f"expected exit {status}: {r}")
    expect(needle in r.err, f"stderr lacks {needle!r}: {r}")
    expect(r.cpu < seconds, f"took {r.cpu:.1f}s of CPU: {r}")
    if r.seconds >= seconds:
        print(f"     (slow, not asserted: {r.seconds:.1f}s of wall time)")


def bundle(name, context=None, logs=None, observations=None):
    d = os.path.join(TMP, name)
    os.makedirs(d, exist_ok=True)
    if context is not None:
        with open(os.path.join(d, "context.json"), "w") as f:
            f.write(context if isinstance(context, str) else json.dumps(context))
    for rel, text in (logs or {}).items():
        p = os.path.join(d, "logs", rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    if observations is not None:
        with open(os.path.join(d, "observations.jsonl"), "w") as f:
            f.write(observations)
    return d


CTX = {"workload_id": "r1", "nodes": ["node-01", "node-02"], "start": "2026-03-14T01:00:00Z",
       "end": "2026-03-14T03:00:00Z", "terminal": {"state": "FAILED", "exit_code": 1}}
XID = "Mar 14 02:03:17 node-0{n} kernel: [233354.402118] NVRM: Xid (PCI:0000:61:00): 79, pid=1234, GPU has fallen off the bus.\n"
APP = "[2026-03-14 02:03:40] node-0{n}:1:1 [0] misc.cc:1 NCCL WARN something\n"


def rules(name, text):
    p = os.path.join(TMP, name)
    with open(p, "w") as f:
        f.write(text)
    return p


def rule_with(cond):
    return ('catalog "t" version "1"\nrule r stage post_outcome {\n  where ' + cond +
            '\n  set outcome unattributed because "x"\n}\n')


# ---------------------------------------------------------------- 1
@case("1: a context nested 100,000 deep is refused, not a crash")
def _():
    d = 100000
    b = bundle("deep", '{"workload_id":"x","nodes":[' + "[" * d + "]" * d + "]}")
    refused(Run(["diagnose", b, "--format", "json"]), "limit json_depth exceeded")


@case("1: an observation nested 100,000 deep is refused")
def _():
    d = 100000
    b = bundle("deep-obs", CTX, observations='{"host":"node-01","source":"app","text":"x","labels":' + "[" * d + "]" * d + "}\n")
    refused(Run(["diagnose", b, "--format", "json"]), "limit json_depth exceeded")


# ---------------------------------------------------------------- 4
@case("4: a context of 1,000,000 nodes is refused by its size or node count")
def _():
    nodes = [f"n{i:07d}" for i in range(1000000)]
    b = bundle("many-nodes", {"workload_id": "x", "nodes": nodes})
    r = Run(["diagnose", b, "--format", "json"])
    refused(r, "limit context_", seconds=20)


@case("4: 40,000 nodes (under the byte limit) are refused by the node limit")
def _():
    b = bundle("nodes-40k", {"workload_id": "x", "nodes": [f"n{i}" for i in range(40000)]})
    refused(Run(["diagnose", b, "--format", "json"]), "limit context_nodes exceeded")


# ---------------------------------------------------------------- 5, 13
GENERATED = {
    "8,000 or alternatives": (rule_with(" or ".join(f"terminal.exit_code == {i}" for i in range(8000))), "E0704"),
    "20,000 nested parentheses": (rule_with("(" * 20000 + "true" + ")" * 20000), "E0703"),
    "10,000 nested calls": (rule_with("lower(" * 10000 + '"a"' + ")" * 10000 + ' == "a"'), "E0703"),
    "100,000 not": (rule_with("not " * 100000 + "true"), "E0703"),
    "100,000 unary minus": (rule_with("terminal.exit_code == " + "-" * 100000 + "1"), "E0703"),
    "20,000-element in list": (rule_with("terminal.exit_code in [" + ",".join(map(str, range(20000))) + "]"), "E0705"),
    "a 2 MiB rule file": ('catalog "t" version "1"\n' + "# padding\n" * (220 * 1024), "E0701"),
    "a deep interpolation path": ('catalog "t" version "1"\nrule r stage symptoms {\n  for e: event metric.sample\n'
                                  '  symptom s.x { summary: "{e' + ".a" * 5000 + '}" }\n}\n', "E0703"),
}
for label, (text, code) in GENERATED.items():
    @case(f"5/13: {label}: check, test and serve --rules give {code}, no crash")
    def _(label=label, text=text, code=code):
        p = rules(f"gen-{code}-{abs(hash(label))}.attr", text)
        refused(Run(["check", "--no-stdlib", p]), code)
        refused(Run(["test", "--no-stdlib", p]), code)
        refused(Run(["serve", "--no-stdlib", "--rules", p, "--listen", "127.0.0.1:0"]), code)


# ---------------------------------------------------------------- 6
REGEX_RULE = ('catalog "t" version "1"\nextractor x from app {\n  match /P (?<n>\\d+)[a-z]{1,30000}x/\n'
              '  emit a.b { n: n }\n  test "one" {\n    line "P 1 ax"\n    expect a.b\n  }\n'
              '  test "none" {\n    line "no"\n    expect none\n  }\n}\n')


@case("6: a bounded repeat of 30,000 is refused at once (E0707), not minutes of hs_compile")
def _():
    refused(Run(["check", "--no-stdlib", "--no-cache", rules("repeat.attr", REGEX_RULE)]), "E0707", seconds=10)


@case("6: ten repeats of 1,000 add up: refused (E0707)")
def _():
    p = "P (?<n>\\d+)" + "".join(f"[a-z]{{1,1000}}{i}" for i in range(10))
    refused(Run(["check", "--no-stdlib", "--no-cache", rules("repeat10.attr", REGEX_RULE.replace("P (?<n>\\d+)[a-z]{1,30000}x", p))]),
            "E0707", seconds=10)


@case("6: a regex over 16 KiB is refused (E0706)")
def _():
    p = "P (?<n>\\d+)" + "ab" * 9000
    refused(Run(["check", "--no-stdlib", "--no-cache", rules("long-regex.attr", REGEX_RULE.replace("P (?<n>\\d+)[a-z]{1,30000}x", p))]),
            "E0706", seconds=10)


# ---------------------------------------------------------------- 7
def confinement_bundle(name):
    out = os.path.join(TMP, f"{name}-outside")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "kernel.log"), "w") as f:
        f.write(XID.format(n=1).replace("node-01", "SECRET-OUTSIDE"))
    b = bundle(name, CTX, {"node-02/kernel.log": "Mar 14 02:00:00 node-02 kernel: nothing\n",
                           "node-02/app.log": APP.format(n=2)})
    return b, out


@case("7: a log file linking out of the bundle is not read, and listed as ignored with the reason")
def _():
    b, out = confinement_bundle("link-file")
    os.makedirs(os.path.join(b, "logs", "node-01"), exist_ok=True)
    os.symlink(os.path.join(out, "kernel.log"), os.path.join(b, "logs", "node-01", "kernel.log"))
    r = Run(["diagnose", b, "--format", "json"])
    expect(r.status == 0, f"{r}")
    expect("SECRET-OUTSIDE" not in r.out, "a line from outside the bundle is quoted as evidence")
    v = r.verdict()
    expect("logs/node-01/kernel.log" in v["coverage"]["ignored_files"], f"not listed as ignored: {v['coverage']['ignored_files']}")
    expect(any("logs/node-01/kernel.log" in w and "symbolic link out of the bundle" in w for w in v["coverage"]["warnings"]),
           f"no reason in the warnings: {v['coverage']['warnings']}")


@case("7: logs/<host> and logs linking out of the bundle are not followed")
def _():
    b, out = confinement_bundle("link-host")
    os.symlink(out, os.path.join(b, "logs", "node-01"))
    v = Run(["diagnose", b, "--format", "json"]).verdict()
    expect("logs/node-01" in v["coverage"]["ignored_files"], f"{v['coverage']}")
    b2 = bundle("link-logs", CTX)
    os.makedirs(os.path.join(out, "node-01"), exist_ok=True)
    shutil.copy(os.path.join(out, "kernel.log"), os.path.join(out, "node-01", "kernel.log"))
    os.symlink(out, os.path.join(b2, "logs"))
    r = Run(["diagnose", b2, "--format", "json"])
    expect("SECRET-OUTSIDE" not in r.out, "logs/ outside the bundle was read")
    expect("logs" in r.verdict()["coverage"]["ignored_files"], f"{r.verdict()['coverage']}")


@case("7: a link that stays inside the bundle is followed")
def _():
    b = bundle("link-inside", CTX, {"node-01/real.txt": XID.format(n=1)})
    os.symlink("real.txt", os.path.join(b, "logs", "node-01", "kernel.log"))
    v = Run(["diagnose", b, "--format", "json"]).verdict()
    expect(v["coverage"]["sources"]["kernel"]["lines_read"] == 1, f"{v['coverage']['sources']['kernel']}")


# ---------------------------------------------------------------- 8
def as_other_user():
    """Permission errors need a user permissions apply to: root ignores them."""
    if os.geteuid() != 0:
        return None
    if not shutil.which("setpriv"):
        return None
    return 65534  # nobody


@case("8: an unreadable logs/<host> is a warning and does not hide its siblings")
def _():
    b = bundle("unreadable-host", CTX, {"node-01/kernel.log": XID.format(n=1), "node-02/kernel.log": XID.format(n=2),
                                        "node-02/app.log": APP.format(n=2)})
    os.chmod(os.path.join(b, "logs", "node-01"), 0)
    r = Run(["diagnose", b, "--format", "json", "--no-cache"], user=as_other_user())
    os.chmod(os.path.join(b, "logs", "node-01"), 0o755)
    expect(r.status == 0, f"{r}")
    v = r.verdict()
    k = v["coverage"]["sources"]["kernel"]
    expect(k["nodes_with_data"] == ["node-02"], f"node-02's log was not read: {k}")
    expect(any("logs/node-01" in w and "cannot list" in w for w in v["coverage"]["warnings"]),
           f"the listing error is not reported: {v['coverage']['warnings']}")


@case("8: a bundle directory that cannot be listed still has observations.jsonl read")
def _():
    obs = json.dumps({"host": "node-01", "source": "kernel", "text": XID.format(n=1).strip()}) + "\n"
    b = bundle("unlistable-root", CTX, {"node-02/app.log": APP.format(n=2)}, observations=obs)
    ref = Run(["diagnose", b, "--format", "json", "--no-cache"]).verdict()
    os.chmod(b, 0o311)  # search but not read: files are reachable by name only
    r = Run(["diagnose", b, "--format", "json", "--no-cache"], user=as_other_user())
    os.chmod(b, 0o755)
    expect(r.status == 0, f"{r}")
    v = r.verdict()
    expect(v["status"] == ref["status"] and v.get("culprit_nodes") == ref.get("culprit_nodes"),
           f"the verdict changed: {v['status']} {v.get('culprit_nodes')} vs {ref['status']} {ref.get('culprit_nodes')}")
    expect(v["coverage"]["sources"]["kernel"]["lines_read"] == 1, f"observations.jsonl was skipped: {v['coverage']['sources']['kernel']}")
    expect(any("cannot list" in w for w in v["coverage"]["warnings"]), f"{v['coverage']['warnings']}")


# ---------------------------------------------------------------- 9, 10
@case("9: observations.jsonl that is a directory is an error, not an empty file")
def _():
    b = bundle("obs-dir", CTX, {"node-01/kernel.log": XID.format(n=1)})
    os.makedirs(os.path.join(b, "observations.jsonl"))
    refused(Run(["diagnose", b, "--format", "json"]), "not a regular file")


@case("9: an observation line over 16 MiB is refused by its limit")
def _():
    b = bundle("obs-long", CTX, observations='{"host":"node-01","source":"app","text":"' + "x" * (17 << 20) + '"}\n')
    refused(Run(["diagnose", b, "--format", "json"]), "limit observation_line exceeded")


@case("10: a FIFO as context.json or observations.jsonl is refused without hanging")
def _():
    b = bundle("fifo-ctx")
    os.mkfifo(os.path.join(b, "context.json"))
    refused(Run(["diagnose", b, "--format", "json"], timeout=20), "FIFO", seconds=15)
    b2 = bundle("fifo-obs", CTX)
    os.mkfifo(os.path.join(b2, "observations.jsonl"))
    refused(Run(["diagnose", b2, "--format", "json"], timeout=20), "not a regular file", seconds=15)


@case("10: context.json linking to /dev/zero is refused, not read forever")
def _():
    b = bundle("devzero")
    os.symlink("/dev/zero", os.path.join(b, "context.json"))
    refused(Run(["diagnose", b, "--format", "json"], timeout=20), "context.json", seconds=15)


@case("10: a context.json over 4 MiB is refused by its limit")
def _():
    b = bundle("big-ctx", '{"workload_id":"x","nodes":["n1"]}' + " " * (5 << 20))
    refused(Run(["diagnose", b, "--format", "json"]), "limit context_bytes exceeded")


# ---------------------------------------------------------------- 15, 17
@case("15: a context with a repeated key is refused")
def _():
    b = bundle("dup-ctx", '{"workload_id":"a","workload_id":"b","nodes":["node-01"]}')
    refused(Run(["diagnose", b, "--format", "json"]), "duplicate key 'workload_id'")


@case("15: an observation with a repeated key is refused")
def _():
    b = bundle("dup-obs", CTX, observations='{"host":"node-01","source":"app","text":"a","text":"b"}\n')
    refused(Run(["diagnose", b, "--format", "json"]), "duplicate key 'text'")


@case("17: exit_code 2^63 is out of range, not a negative number")
def _():
    b = bundle("exit-big", '{"workload_id":"a","nodes":["node-01"],"terminal":{"state":"FAILED","exit_code":9223372036854775808}}')
    refused(Run(["diagnose", b, "--format", "json"]), "out of range")


# ---------------------------------------------------------------- 18
SUMMARY_RULES = r'''catalog "t" version "1"
extractor Big from app {
  match /^BIG (?<v>.*)$/
  emit big.line { v: v }
  test "one" {
    line "BIG abc"
    expect big.line { v: "abc" }
  }
  test "none" {
    line "small"
    expect none
  }
}
rule BigSymptom stage symptoms {
  for e: event big.line
  symptom big.line key e.v { summary: "value {e.v}" }
}
'''


@case("18: a summary interpolating a 1 MiB capture is cut to 4 KiB")
def _():
    p = rules("summary.attr", SUMMARY_RULES)
    b = bundle("big-summary", CTX, {"node-01/app.log": "BIG " + "y" * (1 << 20) + "\n"})
    r = Run(["diagnose", b, "--format", "json", "--rules", p])
    expect(r.status == 0, f"{r}")
    syms = [s for s in r.verdict()["symptoms"] if s["kind"] == "big.line"]
    expect(syms, "no big.line symptom")
    expect(all(len(s["summary"].encode()) <= 4096 for s in syms), f"summary of {max(len(s['summary']) for s in syms)} bytes")
    expect(all(len(s["id"].encode()) <= 400 for s in syms), f"id of {max(len(s['id']) for s in syms)} bytes")
    expect(len(r.out) < 200_000, f"a verdict of {len(r.out)} bytes")


# ---------------------------------------------------------------- 19, 20
@case("19: a diagnostic about a 900 KB token is short")
def _():
    p = rules("one-token.attr", "x" * (900 << 10) + " {\n")
    r = Run(["check", "--no-stdlib", p])
    expect(r.status == 2 and "E0001" in r.err, f"{r}")
    expect(len(r.err) < 16384, f"{len(r.err)} bytes of diagnostics")


@case("19: invalid UTF-8 in a rule file is reported where it is (E0003)")
def _():
    p = os.path.join(TMP, "bad-utf8.attr")
    with open(p, "wb") as f:
        f.write(b'catalog "t" version "1"\n# fine\n# caf\xff\n')
    r = Run(["check", "--no-stdlib", p])
    refused(r, "E0003")
    expect("bad-utf8.attr:3:6:" in r.err, f"not at 3:6: {r}")


@case("20: a directory named context.json is named as such, not 'not valid JSON'")
def _():
    b = bundle("ctx-dir")
    os.makedirs(os.path.join(b, "context.json"))
    r = Run(["diagnose", b, "--format", "json"])
    refused(r, "a directory")
    expect("not valid JSON" not in r.err, f"{r}")


@case("20: a FIFO given as a rule path is named as such, not 'does not exist'")
def _():
    p = os.path.join(TMP, "rules.fifo")
    os.mkfifo(p)
    r = Run(["check", "--no-stdlib", p], timeout=20)
    refused(r, "FIFO", seconds=15)
    expect("does not exist" not in r.err, f"{r}")


# ---------------------------------------------------------------- 21
@case("21: a log with CR-only line ends is reported in coverage")
def _():
    b = bundle("cr-only", CTX, {"node-01/kernel.log": (XID.format(n=1) * 3).replace("\n", "\r")})
    v = Run(["diagnose", b, "--format", "json"]).verdict()
    expect(any("carriage return" in w for w in v["coverage"]["warnings"]), f"{v['coverage']['warnings']}")


print(f"{passed} passed, {len(failures)} failed")
shutil.rmtree(TMP, ignore_errors=True)
if failures:
    for f in failures:
        print(f"  - {f}", file=sys.stderr)
    sys.exit(1)
