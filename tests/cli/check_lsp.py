#!/usr/bin/env python3
"""A scripted LSP client for `culprit lsp` (cli/lsp_command.h).

Starts the server, opens a broken .attr file and checks the published
diagnostic (range in UTF-16 units on a line with non-ASCII text before it,
code, severity, and the diagnostic of another file of the catalog), fixes
both files and saves and checks that every diagnostic clears, hovers a kind
and an extractor, asks the definition of a kind, sends malformed messages
and checks the server answers or skips them and goes on, then shuts down
and exits with status 0 (and, in a second session, 1 without shutdown).
A last session loads the bundled catalog and hovers one of its kinds.

Usage: check_lsp.py CULPRIT_BIN
"""
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse

TIMEOUT = 120  # seconds for one answer (a compile of the bundled catalog included)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def uri(path):
    return "file://" + urllib.parse.quote(os.path.realpath(path))


def utf16_len(s):
    return len(s.encode("utf-16-le")) // 2


class Client:
    def __init__(self, args, env):
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.messages = queue.Queue()
        self.pending = []  # notifications read while waiting for an answer
        self.next_id = 1
        self.stderr = []
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr_reader = threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True)
        self.stderr_reader.start()

    def _read(self):
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                line = line.decode().rstrip("\r\n")
                if not line:
                    break
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            body = out.read(int(headers["content-length"]))
            self.messages.put(json.loads(body))

    def raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def next(self):
        try:
            m = self.messages.get(timeout=TIMEOUT)
        except queue.Empty:
            m = None
        if m is None:
            raise SystemExit("FAIL: no message from the server (it ended or hung)\n" + b"".join(self.stderr).decode(errors="replace"))
        return m

    def answer(self, rid):
        """The response to request `rid`; notifications before it are kept."""
        while True:
            m = self.next()
            if m.get("id") == rid and "method" not in m:
                return m
            self.pending.append(m)

    def diagnostics(self, count):
        """The next `count` publishDiagnostics notifications, by URI."""
        out = {}
        kept = []
        for m in self.pending:
            if m.get("method") == "textDocument/publishDiagnostics" and len(out) < count:
                out[m["params"]["uri"]] = m["params"]["diagnostics"]
            else:
                kept.append(m)
        self.pending = kept
        while len(out) < count:
            m = self.next()
            if m.get("method") == "textDocument/publishDiagnostics":
                out[m["params"]["uri"]] = m["params"]["diagnostics"]
        return out

    def wait(self):
        """The exit status, once stderr has been read to its end (None on a hang)."""
        try:
            status = self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return None
        self.stderr_reader.join(timeout=TIMEOUT)
        return status


def initialize(c, root):
    rid = c.request("initialize", {"processId": os.getpid(), "rootUri": uri(root), "capabilities": {}})
    caps = c.answer(rid).get("result", {}).get("capabilities", {})
    check(caps.get("hoverProvider") is True, "initialize: hoverProvider")
    check(caps.get("definitionProvider") is True, "initialize: definitionProvider")
    sync = caps.get("textDocumentSync", {})
    check(sync.get("change") == 1 and sync.get("openClose") is True and "save" in sync, f"initialize: full sync with save: {sync}")
    c.notify("initialized", {})


XID = """# A site's XID extractor → gpu.xid (the arrow checks UTF-8 around it).
extractor GpuXid from kernel {
  match /NVRM: Xid \\(PCI:(?<pci>[0-9a-fA-F:.]+)\\): (?<xid>\\d+)/
  emit gpu.xid { pci: pci, xid: int(xid) }
  test { line "NVRM: Xid (PCI:0000:3b:00): 79, x" expect gpu.xid { xid: 79 } }
  test { line "NVRM: loading" expect none }
}
"""
EXTRA_BROKEN = """rule SeesXid stage symptoms {
  for e: event gpu.xdi
  symptom site.seen key e.pci { summary: "seen" }
}
"""
SITE = """# Site rule (é).
rule SiteXid stage symptoms {
  for e: event gpu.xid
  where e.pci != "é→😀" or exists(y: event KIND on same node)
  symptom site.xid_seen key e.pci { summary: "XID {e.xid}" }
}
"""
NESTED = """rule SiteNested stage symptoms {
  for a: event gpu.xid
  where exists(b: event gpu.xid where b.pci != a.pci)
  symptom site.nested key a.pci { summary: "two GPUs" }
}
"""


def main():
    tmp = tempfile.mkdtemp(prefix="culprit-lsp-")
    try:
        return session(sys.argv[1], tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def session(culprit, tmp):
    rules = os.path.join(tmp, "rules")
    os.mkdir(rules)
    xid_path, extra_path, site_path = os.path.join(rules, "xid.attr"), os.path.join(rules, "extra.attr"), os.path.join(tmp, "my site.attr")
    with open(xid_path, "w") as f:
        f.write(XID)
    with open(extra_path, "w") as f:
        f.write(EXTRA_BROKEN)
    broken = SITE.replace("KIND", "gpu.xidd")
    with open(site_path, "w") as f:
        f.write(broken)
    env = dict(os.environ, CULPRIT_CACHE_DIR=os.path.join(tmp, "cache"))

    c = Client([culprit, "lsp", "--no-stdlib", "--rules", rules], env)
    initialize(c, tmp)

    # Open the broken file: its own diagnostic and extra.attr's.
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri(site_path), "languageId": "attr", "version": 1, "text": broken}})
    got = c.diagnostics(2)
    site = got.get(uri(site_path), [])
    check(len(site) == 1, f"open: one diagnostic for the site file, got {site}")
    if site:
        d = site[0]
        line = broken.split("\n")[3]
        start = utf16_len(line[: line.index("gpu.xidd")])
        check(start != line.encode().index(b"gpu.xidd"), "test: the line has non-ASCII text before the kind")
        check(d["range"] == {"start": {"line": 3, "character": start}, "end": {"line": 3, "character": start + 8}},
              f"open: the E0201 range in UTF-16 units: {d['range']}")
        check(d.get("code") == "E0201", f"open: code E0201: {d.get('code')}")
        check(d.get("severity") == 1, f"open: severity error: {d.get('severity')}")
        check(d.get("source") == "culprit", "open: source culprit")
        check("gpu.xidd" in d.get("message", "") and "did you mean 'gpu.xid'" in d.get("message", ""),
              f"open: message with its help: {d.get('message')}")
    extra = got.get(uri(extra_path), [])
    check(len(extra) == 1 and extra[0].get("code") == "E0201" and extra[0]["range"]["start"]["line"] == 1,
          f"open: the other file's diagnostic under its own URI: {got.keys()} {extra}")

    # Fix both files on disk, tell the server of the edit and the save: every list clears.
    fixed = SITE.replace("KIND", "gpu.xid")
    with open(site_path, "w") as f:
        f.write(fixed)
    with open(extra_path, "w") as f:
        f.write(EXTRA_BROKEN.replace("gpu.xdi", "gpu.xid"))
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri(site_path), "version": 2}, "contentChanges": [{"text": fixed}]})
    c.notify("textDocument/didSave", {"textDocument": {"uri": uri(site_path)}})
    got = c.diagnostics(2)
    check(got.get(uri(site_path)) == [], f"save: the site file's diagnostics clear: {got.get(uri(site_path))}")
    check(got.get(uri(extra_path)) == [], f"save: the other file's diagnostics clear: {got.get(uri(extra_path))}")

    # A rule that compiles but nests a query no index narrows: the warning `culprit check` gives (E0801), on save.
    nested = fixed + NESTED
    with open(site_path, "w") as f:
        f.write(nested)
    c.notify("textDocument/didSave", {"textDocument": {"uri": uri(site_path)}})
    got = c.diagnostics(1).get(uri(site_path), [])
    check(len(got) == 1 and got[0].get("code") == "E0801" and got[0].get("severity") == 2
          and got[0]["range"]["start"]["line"] == len(fixed.split("\n")) + 1,
          f"save: a nested unindexed query is warned about (E0801) like culprit check does: {got}")
    with open(site_path, "w") as f:
        f.write(fixed)
    c.notify("textDocument/didSave", {"textDocument": {"uri": uri(site_path)}})
    check(c.diagnostics(1).get(uri(site_path)) == [], "save: the warning clears with the rule")

    # Hover the kind after the non-ASCII string: its extractor, with file and line, and the rules reading it.
    line = fixed.split("\n")[3]
    at = utf16_len(line[: line.index("gpu.xid")]) + 2
    rid = c.request("textDocument/hover", {"textDocument": {"uri": uri(site_path)}, "position": {"line": 3, "character": at}})
    res = c.answer(rid).get("result") or {}
    md = (res.get("contents") or {}).get("value", "")
    check("GpuXid" in md and "xid.attr:2" in md, f"hover gpu.xid: names its extractor and file:line: {md!r}")
    check("SiteXid" in md and "SeesXid" in md, f"hover gpu.xid: names the rules that read it: {md!r}")
    check(res.get("range", {}).get("start", {}).get("character") == at - 2, f"hover: the word's range: {res.get('range')}")

    # Definition of the kind: the extractor's declaration in the other file.
    rid = c.request("textDocument/definition", {"textDocument": {"uri": uri(site_path)}, "position": {"line": 2, "character": 16}})
    locs = c.answer(rid).get("result") or []
    check(len(locs) == 1 and locs[0]["uri"] == uri(xid_path) and locs[0]["range"]["start"] == {"line": 1, "character": 10},
          f"definition gpu.xid: extractor GpuXid at xid.attr line 2: {locs}")
    # Of a symptom kind: the rule action that creates it.
    rid = c.request("textDocument/definition", {"textDocument": {"uri": uri(site_path)}, "position": {"line": 4, "character": 14}})
    locs = c.answer(rid).get("result") or []
    check(len(locs) == 1 and locs[0]["uri"] == uri(site_path) and locs[0]["range"]["start"]["line"] == 4,
          f"definition site.xid_seen: its symptom action: {locs}")
    # Nothing under the cursor: null.
    rid = c.request("textDocument/hover", {"textDocument": {"uri": uri(site_path)}, "position": {"line": 0, "character": 0}})
    check(c.answer(rid).get("result") is None, "hover on '#': null")

    # Hover an extractor name in its own file.
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri(xid_path), "languageId": "attr", "version": 1, "text": XID}})
    check(c.diagnostics(1).get(uri(xid_path)) == [], "open xid.attr: clean")
    rid = c.request("textDocument/hover", {"textDocument": {"uri": uri(xid_path)}, "position": {"line": 1, "character": 12}})
    md = ((c.answer(rid).get("result") or {}).get("contents") or {}).get("value", "")
    check("extractor" in md and "kernel" in md and "gpu.xid" in md and "NVRM: Xid" in md,
          f"hover GpuXid: sources, kind and regex: {md!r}")

    # Malformed input: each is answered or skipped, and the server goes on.
    c.raw(b"Content-Length: 9\r\n\r\n{not json")
    m = c.answer(None)
    check(m.get("error", {}).get("code") == -32700, f"not JSON: ParseError: {m}")
    c.raw(b"Content-Type: nothing else\r\n\r\n")
    c.raw(b"Content-Length: %d\r\n\r\n" % (16 * 1024 * 1024 + 1) + b" " * (16 * 1024 * 1024 + 1))
    c.send([1, 2])
    m = c.answer(None)
    check(m.get("error", {}).get("code") == -32600, f"not a request: InvalidRequest: {m}")
    c.send({"jsonrpc": "2.0", "id": [1], "method": "textDocument/hover", "params": {}})
    m = c.answer(None)
    check(m.get("error", {}).get("code") == -32600, f"an id that is neither integer nor string: InvalidRequest: {m}")
    rid = c.request("culprit/nonsense", {})
    check(c.answer(rid).get("error", {}).get("code") == -32601, "unknown request: MethodNotFound")
    c.notify("culprit/nonsense", {})
    rid = c.request("textDocument/hover", {"textDocument": {"uri": uri(site_path)}, "position": {"line": "x", "character": -1}})
    check(c.answer(rid).get("error", {}).get("code") == -32602, "hover with a bad position: InvalidParams")
    rid = c.request("textDocument/hover", {"textDocument": 7, "position": None})
    check(c.answer(rid).get("error", {}).get("code") == -32602, "hover with params of the wrong shape: InvalidParams")
    c.notify("textDocument/didOpen", {"textDocument": "nonsense"})
    rid = c.request("textDocument/definition", {"textDocument": {"uri": uri(site_path)}, "position": {"line": 2, "character": 16}})
    check(len(c.answer(rid).get("result") or []) == 1, "after the malformed messages the server still answers")

    rid = c.request("shutdown", None)
    check("error" not in c.answer(rid), "shutdown")
    c.notify("exit", None)
    status = c.wait()
    log = b"".join(c.stderr).decode(errors="replace")
    check(status == 0, f"exit after shutdown: status 0, got {status}; stderr: {log}")
    check("Content-Length" in log and "over the limit" in log, f"the skipped frames are logged: {log!r}")

    # exit without shutdown: status 1.
    c = Client([culprit, "lsp", "--no-stdlib"], env)
    initialize(c, tmp)
    c.notify("exit", None)
    check(c.wait() == 1, "exit without shutdown: status 1")

    # The bundled catalog: the site file compiles with it; gpu.xid is the stdlib's extractor's.
    c = Client([culprit, "lsp"], env)
    initialize(c, tmp)
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri(site_path), "languageId": "attr", "version": 1, "text": fixed}})
    got = c.diagnostics(1)
    check(got.get(uri(site_path)) == [], f"bundled catalog: the site file is clean: {got}")
    rid = c.request("textDocument/hover", {"textDocument": {"uri": uri(site_path)}, "position": {"line": 2, "character": 16}})
    md = ((c.answer(rid).get("result") or {}).get("contents") or {}).get("value", "")
    check("GpuXid" in md and "gpu_xid.attr:" in md, f"bundled catalog: hover gpu.xid names GpuXid in gpu_xid.attr: {md[:300]!r}")
    rid = c.request("shutdown", None)
    c.answer(rid)
    c.notify("exit", None)
    check(c.wait() == 0, "bundled catalog session: status 0")

    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("ok: culprit lsp answered the scripted session")
    return 0


if __name__ == "__main__":
    sys.exit(main())
