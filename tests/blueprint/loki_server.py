#!/usr/bin/env python3
"""A Grafana Loki query frontend for the blueprint's tests (Loki has no Debian
package and cannot run here), over log streams loaded from a JSON fixture.
It answers the part of Loki's HTTP API the Loki collector uses exactly as
the documented API does (grafana.com/docs/loki/latest/reference/loki-http-api):

* GET /ready -> 200 "ready";
* GET|POST /loki/api/v1/query_range with query, start, end (Unix ns, Unix
  seconds with a fraction, or RFC 3339), limit (default 100), direction
  (backward, the default, or forward): `start` inclusive, `end` exclusive,
  at most `limit` entries over all streams in direction order, answered as
  {"status":"success","data":{"resultType":"streams","result":[{"stream":
  {labels},"values":[["<ns>","<line>"],...]}],"stats":{...}}} with each
  stream's values in direction order;
* GET|POST /loki/api/v1/series with match[] (repeatable), start, end ->
  {"status":"success","data":[{labels},...]}: the streams with an entry in
  the range;
* LogQL: a stream selector {l="v", l!="v", l=~"re", l!~"re"} (label regexes
  fully anchored, as Prometheus' and Loki's are) followed by line filters
  |= "s", != "s", |~ "re", !~ "re"; strings double-quoted with Go escapes or
  in backticks. Regexes are RE2 syntax (checked against Python's re, which
  agrees on the subset used: (?i), groups, alternation, classes, escapes);
* errors as Loki sends them: 400 with a plain-text body for a parse error
  ("parse error at line 1, col N: ..."), a limit above
  max_entries_limit_per_query (5000: "max entries limit per query exceeded,
  limit > max_entries_limit (6000 > 5000)") or a range above max_query_length
  (721h); 401 "no org id" when --tenant is given and X-Scope-OrgID is not
  that tenant; 404 "404 page not found" for other paths.

Test knobs: --fail STATUS[,STATUS...] answers the first query_range requests
with those statuses (429 "too many outstanding requests", 5xx), to prove
backoff; --request-log FILE appends one JSON line per request: method, path,
query, status, response bytes; --latency SECONDS holds every query that long
before answering it, as a remote log store's round trip does (concurrent
queries wait at once: the server is threaded). The port is written to --port-file once
listening (bind 127.0.0.1, port 0 by default).

Fixture (JSON): {"streams": [{"stream": {"label": "value", ...},
"values": [["<ns>", "<line>"], ...]}, ...]}.
"""

import argparse
import bisect
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

MAX_ENTRIES = 5000
MAX_QUERY_LENGTH_NS = 721 * 3600 * 10**9


class LogQLError(Exception):
    def __init__(self, col, msg):
        super().__init__(f"parse error at line 1, col {col}: {msg}")


def go_unquote(s, col):
    """A Go double-quoted string body (without quotes) -> text."""
    out, i = [], 0
    simple = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"', "'": "'"}
    while i < len(s):
        c = s[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(s):
            raise LogQLError(col, "invalid char escape")
        e = s[i + 1]
        if e in simple:
            out.append(simple[e])
            i += 2
        elif e in "xuU":
            n = {"x": 2, "u": 4, "U": 8}[e]
            h = s[i + 2:i + 2 + n]
            if len(h) != n or not all(ch in "0123456789abcdefABCDEF" for ch in h):
                raise LogQLError(col, "invalid char escape")
            out.append(chr(int(h, 16)))
            i += 2 + n
        elif e in "01234567":
            o = s[i + 1:i + 4]
            if len(o) != 3 or not all(ch in "01234567" for ch in o):
                raise LogQLError(col, "invalid char escape")
            out.append(chr(int(o, 8)))
            i += 4
        else:
            raise LogQLError(col, "invalid char escape")
    return "".join(out)


class Lexer:
    def __init__(self, q):
        self.q, self.i = q, 0

    def skip(self):
        while self.i < len(self.q) and self.q[self.i] in " \t\n\r":
            self.i += 1

    def col(self):
        return self.i + 1

    def peek(self, *toks):
        self.skip()
        for t in toks:
            if self.q.startswith(t, self.i):
                return t
        return None

    def expect(self, *toks):
        t = self.peek(*toks)
        if t is None:
            got = self.q[self.i:self.i + 1] or "end of input"
            raise LogQLError(self.col(), f"syntax error: unexpected {got}, expecting {' or '.join(toks)}")
        self.i += len(t)
        return t

    def ident(self):
        self.skip()
        m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(self.q, self.i)
        if not m:
            raise LogQLError(self.col(), f"syntax error: unexpected {self.q[self.i:self.i + 1] or 'end of input'}, expecting IDENTIFIER")
        self.i = m.end()
        return m.group(0)

    def string(self):
        self.skip()
        col = self.col()
        if self.i >= len(self.q) or self.q[self.i] not in "\"`":
            raise LogQLError(col, f"syntax error: unexpected {self.q[self.i:self.i + 1] or 'end of input'}, expecting STRING")
        quote = self.q[self.i]
        j = self.i + 1
        while j < len(self.q):
            if quote == '"' and self.q[j] == "\\":
                j += 2
                continue
            if self.q[j] == quote:
                break
            j += 1
        if j >= len(self.q):
            raise LogQLError(col, "literal not terminated")
        body = self.q[self.i + 1:j]
        self.i = j + 1
        return body if quote == "`" else go_unquote(body, col)


def compile_re(pattern, col, anchored):
    try:
        return re.compile(("(?:%s)\\Z" % pattern) if anchored else pattern)
    except re.error as e:
        raise LogQLError(col, f"error parsing regexp: {e}")


def parse_logql(q):
    """-> (matchers [(label, op, value|regex)], filters [(op, str|regex)])"""
    lx = Lexer(q)
    lx.expect("{")
    matchers = []
    if not lx.peek("}"):
        while True:
            name = lx.ident()
            op = lx.expect("=~", "!~", "!=", "=")
            col = lx.col()
            val = lx.string()
            matchers.append((name, op, compile_re(val, col, True) if "~" in op else val))
            if lx.peek("}"):
                break
            lx.expect(",")
    lx.expect("}")
    if not any(op == "=" and v != "" or op == "=~" and not v.match("") for _n, op, v in matchers):
        raise LogQLError(1, "queries require at least one regexp or equality matcher that does not have an empty-compatible value. "
                            "For instance, app=~\".*\" does not meet this requirement, but app=~\".+\" will")
    filters = []
    while True:
        lx.skip()
        if lx.i >= len(q):
            break
        op = lx.expect("|=", "!=", "|~", "!~")
        col = lx.col()
        s = lx.string()
        filters.append((op, compile_re(s, col, False) if "~" in op else s))
    return matchers, filters


def literal_alternation(pattern):
    """(literals, with_suffix) when an anchored label regex (compile_re's
    text) is an alternation of literals, optionally followed by the
    collector's FQDN/port suffix `(?:[.:].*)?`; else None."""
    if not (pattern.startswith("(?:") and pattern.endswith(")\\Z")):
        return None
    inner, suffix = pattern[3:-3], False
    if inner.endswith("(?:[.:].*)?"):
        inner, suffix = inner[:-len("(?:[.:].*)?")], True
    if not (inner.startswith("(?:") and inner.endswith(")")):
        return None
    body, lits, cur, i = inner[3:-1], [], "", 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            if i + 1 >= len(body):
                return None
            cur, i = cur + body[i + 1], i + 2
            continue
        if c == "|":
            lits.append(cur)
            cur, i = "", i + 1
            continue
        if c in ".+*?()[]{}^$":
            return None
        cur, i = cur + c, i + 1
    lits.append(cur)
    return lits, suffix


def candidate_streams(st, matchers):
    """Indices of the streams that can match: those an equality matcher or a
    matcher that is an alternation of literals (the collector's host matcher)
    names, from the label index; every stream when no matcher is of that
    kind. A superset: labels_match still decides, so the answer is the one a
    scan of every stream gives, fast on fleet-sized fixtures."""
    best = None
    for name, op, v in matchers:
        values = st.by_label.get(name, {})
        if op == "=" and v != "":
            idx = set(values.get(v, ()))
        elif op == "=~":
            alt = literal_alternation(v.pattern)
            if alt is None:
                continue
            idx = set()
            ordered = st.sorted_values.get(name, [])
            for lit in alt[0]:
                idx.update(values.get(lit, ()))
                if alt[1]:  # and its FQDN and host:port forms
                    k = bisect.bisect_left(ordered, lit)
                    while k < len(ordered) and ordered[k].startswith(lit):
                        if ordered[k][len(lit):len(lit) + 1] in (".", ":"):
                            idx.update(values[ordered[k]])
                        k += 1
        else:
            continue
        best = idx if best is None else best & idx
    return range(len(st.streams)) if best is None else sorted(best)


def labels_match(labels, matchers):
    for name, op, v in matchers:
        have = labels.get(name, "")
        if op == "=" and have != v or op == "!=" and have == v:
            return False
        if op == "=~" and not v.match(have) or op == "!~" and v.match(have):
            return False
    return True


def line_passes(line, filters):
    for op, v in filters:
        if op == "|=" and v not in line or op == "!=" and v in line:
            return False
        if op == "|~" and not v.search(line) or op == "!~" and v.search(line):
            return False
    return True


def parse_time(s, default):
    if s is None or s == "":
        return default
    if re.fullmatch(r"\d+", s):
        n = int(s)
        return n if n > 10**12 else n * 10**9  # ns, or whole seconds
    if re.fullmatch(r"\d+\.\d*", s):
        return int(float(s) * 10**9)
    try:
        d = datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
        return int(d.timestamp()) * 10**9 + d.microsecond * 1000
    except ValueError:
        raise ValueError(f"cannot parse \"{s}\" to a valid timestamp")


class State:
    def __init__(self, fixture, tenant, fail, log_path):
        self.streams = []
        for s in fixture["streams"]:
            vals = sorted(((int(ts), line) for ts, line in s["values"]), key=lambda x: x[0])
            self.streams.append((dict(s["stream"]), vals))
        self.by_label = {}  # label -> value -> stream indices (candidate_streams)
        for si, (labels, _vals) in enumerate(self.streams):
            for k, v in labels.items():
                self.by_label.setdefault(k, {}).setdefault(v, []).append(si)
        self.sorted_values = {k: sorted(vs) for k, vs in self.by_label.items()}
        self.passing = {}  # line filters -> per stream, the positions of the lines they pass
        self.tenant = tenant
        self.fail = list(fail)
        self.log_path = log_path
        self.latency = 0.0
        self.lock = threading.Lock()


def passing_lines(st, filters):
    """Per stream, the positions of the lines `filters` pass: computed over
    the whole fixture the first time a filter is seen, then looked up. A
    real Loki spends its own machines' CPU on line filters; here the server
    shares the machine with what it serves, so each filter is applied once
    (the blueprint sends the same catalog filter with every query)."""
    key = tuple((op, v.pattern if hasattr(v, "pattern") else v) for op, v in filters)
    with st.lock:
        got = st.passing.get(key)
        if got is None:
            got = passing_by_ripgrep(st, filters)
            if got is None:
                got = [[pos for pos, (_ts, line) in enumerate(vals) if line_passes(line, filters)] for _labels, vals in st.streams]
            st.passing[key] = got
    return got


def passing_by_ripgrep(st, filters):
    """passing_lines for one `|~` filter, by ripgrep when it is installed: its
    regex syntax is RE2's, as Loki's is, and it reads a million lines in a
    fraction of a second where Python's re takes minutes on the catalog's
    alternation of hundreds of atoms. None: not applicable (use Python)."""
    if len(filters) != 1 or filters[0][0] != "|~" or not shutil.which("rg"):
        return None
    pattern = filters[0][1].pattern
    with tempfile.TemporaryDirectory(prefix="loki-filter.") as d:
        lines_path = os.path.join(d, "lines")
        with open(lines_path, "w", encoding="utf-8", errors="surrogateescape") as f:
            for _labels, vals in st.streams:
                for _ts, line in vals:
                    f.write(line.replace("\n", " ").replace("\r", " ") + "\n")
        r = subprocess.run(["rg", "--no-config", "-n", "--no-filename", "--no-heading", "-o", "-r", "", "--", pattern, lines_path],
                           capture_output=True, text=True)
        if r.returncode not in (0, 1):
            return None  # a pattern ripgrep reads otherwise: Python decides
        hits = {int(l.split(":", 1)[0]) - 1 for l in r.stdout.splitlines() if l}
    got, base = [], 0
    for _labels, vals in st.streams:
        got.append([pos for pos in range(len(vals)) if base + pos in hits])
        base += len(vals)
    return got


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    st = None

    def log_message(self, fmt, *args):
        pass

    def params(self):
        u = urlsplit(self.path)
        p = parse_qs(u.query, keep_blank_values=True)
        if self.command == "POST":
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n).decode() if n else ""
            if (self.headers.get("Content-Type") or "").startswith("application/x-www-form-urlencoded"):
                for k, v in parse_qs(body, keep_blank_values=True).items():
                    p.setdefault(k, []).extend(v)
        return u.path, p

    def send(self, code, body, ctype, path, query):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        if self.st.log_path:
            with self.st.lock, open(self.st.log_path, "a") as f:
                f.write(json.dumps({"method": self.command, "path": path, "query": query, "status": code, "bytes": len(data),
                                    "direction": getattr(self, "direction", "")}) + "\n")

    def text(self, code, msg, path, query=""):
        self.send(code, msg + "\n", "text/plain; charset=utf-8", path, query)

    def do_GET(self):
        self.route()

    def do_POST(self):
        self.route()

    def route(self):
        path, p = self.params()
        one = lambda k: p.get(k, [None])[0]
        if path == "/ready":
            return self.text(200, "ready", path)
        if path not in ("/loki/api/v1/query_range", "/loki/api/v1/series"):
            return self.text(404, "404 page not found", path)
        if self.st.latency > 0:  # a remote log store's round trip, per query
            time.sleep(self.st.latency)
        if self.st.tenant and self.headers.get("X-Scope-OrgID") != self.st.tenant:
            return self.text(401, "no org id", path)
        now = int(datetime.datetime.now(datetime.timezone.utc).timestamp()) * 10**9
        try:
            end = parse_time(one("end"), now)
            start = parse_time(one("start"), end - 3600 * 10**9)
        except ValueError as e:
            return self.text(400, str(e), path)
        if end < start:
            return self.text(400, "end timestamp must not be before or equal to start time", path)
        if end - start > MAX_QUERY_LENGTH_NS:
            h = (end - start) // (3600 * 10**9)
            return self.text(400, f"the query time range exceeds the limit (query length: {h}h0m0s, limit: 721h0m0s)", path)
        if path == "/loki/api/v1/series":
            return self.series(p.get("match[]", []), start, end, path)
        query = one("query") or ""
        with self.st.lock:
            injected = self.st.fail.pop(0) if self.st.fail else None
        if injected:
            msg = "too many outstanding requests" if injected == 429 else "upstream error"
            return self.text(injected, msg, path, query)
        try:
            limit = int(one("limit") or 100)
        except ValueError:
            return self.text(400, f"invalid limit: {one('limit')}", path, query)
        if limit <= 0:
            return self.text(400, "limit must be a positive value", path, query)
        if limit > MAX_ENTRIES:
            return self.text(400, f"max entries limit per query exceeded, limit > max_entries_limit ({limit} > {MAX_ENTRIES})", path, query)
        direction = self.direction = (one("direction") or "backward").lower()
        if direction not in ("forward", "backward"):
            return self.text(400, f"invalid direction: {direction}", path, query)
        try:
            matchers, filters = parse_logql(query)
        except LogQLError as e:
            return self.text(400, str(e), path, query)
        entries = []  # (ts, stream index, position, line)
        scanned = 0
        passing = passing_lines(self.st, filters) if filters else None
        for si in candidate_streams(self.st, matchers):
            labels, vals = self.st.streams[si]
            if not labels_match(labels, matchers):
                continue
            # The stream's lines in [start, end) (values are sorted by time).
            lo = bisect.bisect_left(vals, (start, ""))
            hi = bisect.bisect_left(vals, (end, ""))
            scanned += sum(len(line) for _ts, line in vals[lo:hi])
            positions = range(lo, hi) if passing is None else passing[si][bisect.bisect_left(passing[si], lo):bisect.bisect_left(passing[si], hi)]
            for pos in positions:
                ts, line = vals[pos]
                entries.append((ts, si, pos, line))
        entries.sort(key=lambda e: (e[0], e[1], e[2]), reverse=(direction == "backward"))
        entries = entries[:limit]
        by_stream = {}
        for ts, si, pos, line in entries:
            by_stream.setdefault(si, []).append([str(ts), line])
        result = [{"stream": self.st.streams[si][0], "values": v} for si, v in sorted(by_stream.items())]
        stats = {"summary": {"bytesProcessedPerSecond": 0, "linesProcessedPerSecond": 0, "totalBytesProcessed": scanned,
                             "totalLinesProcessed": len(entries), "execTime": 0.001, "queueTime": 0, "subqueries": 0,
                             "totalEntriesReturned": len(entries)}}
        body = {"status": "success", "data": {"resultType": "streams", "result": result, "stats": stats}}
        self.send(200, json.dumps(body), "application/json; charset=UTF-8", path, query)

    def series(self, matches, start, end, path):
        if not matches:
            return self.text(400, "0 matchers provided", path)
        sels = []
        try:
            for m in matches:
                mm, ff = parse_logql(m)
                if ff:
                    raise LogQLError(1, "only label matchers are supported")
                sels.append(mm)
        except LogQLError as e:
            return self.text(400, str(e), path)
        out = []
        for si in sorted(set().union(*(set(candidate_streams(self.st, mm)) for mm in sels))):
            labels, vals = self.st.streams[si]
            if any(labels_match(labels, mm) for mm in sels) and any(start <= ts < end for ts, _ in vals):
                out.append(labels)
        out.sort(key=lambda l: sorted(l.items()))
        self.send(200, json.dumps({"status": "success", "data": out}), "application/json; charset=UTF-8", path, " ".join(matches))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("fixture")
    ap.add_argument("--listen", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--tenant", default="")
    ap.add_argument("--fail", default="", help="statuses for the first query_range requests, e.g. 429,503")
    ap.add_argument("--request-log", default="")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds each query waits before it is answered, e.g. 0.1")
    a = ap.parse_args()
    fail = [int(x) for x in a.fail.split(",") if x]
    Handler.st = State(json.load(open(a.fixture)), a.tenant, fail, a.request_log)
    Handler.st.latency = max(0.0, a.latency)
    srv = ThreadingHTTPServer((a.listen, a.port), Handler)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.replace(a.port_file + ".tmp", a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
