#!/usr/bin/env python3
"""`culprit dashboard` over HTTP, on SQLite and on a real PostgreSQL.

    check_dashboard.py CULPRIT SOURCE_DIR [--no-postgresql]

`culprit run --once` writes the examples into a SQLite store and into a
PostgreSQL 15 database (an ephemeral cluster started here on 127.0.0.1 and
stopped by its PID). For each store, `culprit dashboard` serves it on a free
loopback port and this script checks, as a client:
- the pages and JSON endpoints answer, and say the same as the store's rows
  (totals, filters, one workload's cause, the verdict JSON byte for byte);
- it cannot write: every method but GET/HEAD is 405 with `Allow`, on every
  route; the store is unchanged afterwards (SQLite: the file's bytes;
  PostgreSQL: the rows and the server's count of inserted, updated and
  deleted tuples);
- hostile input in every filter parameter (SQL, quotes, NUL, overlong,
  invalid UTF-8) gets a 400 or an empty result, never a 5xx nor SQL text;
- usage errors: a missing store, a store that is not a Culprit store, a
  password in the URL, an address in use, a FIFO or a directory as the
  store (`dashboard` and `offenders`: refused at once, never blocked);
- slow and hostile clients (SQLite): ten clients dripping a header line a
  second do not delay /healthz nor a page (each under 1 s), SIGTERM with
  them connected stops the dashboard within its drain timeout, pipelined
  requests get one answer each, in order;
- DNS rebinding: a Host that is not loopback, the --listen address or an
  --allow-host name gets 421 (not /healthz); a non-loopback --listen warns;
- time parameters whose int64 arithmetic would overflow are a small 400.
"""
import hashlib
import http.client
import datetime
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

CULPRIT = os.path.abspath(sys.argv[1])
ROOT = os.path.abspath(sys.argv[2])
WITH_PG = "--no-postgresql" not in sys.argv
HERE = os.path.dirname(os.path.abspath(__file__))
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Dashboard:
    """`culprit dashboard` on a free loopback port, stopped by its PID."""

    def __init__(self, store, workdir, extra=()):
        self.port_file = os.path.join(workdir, "port")
        if os.path.exists(self.port_file):
            os.remove(self.port_file)
        self.log = open(os.path.join(workdir, "dashboard.log"), "w+")
        self.proc = subprocess.Popen([CULPRIT, "dashboard", "--store", store, "--listen", "127.0.0.1:0",
                                      "--port-file", self.port_file, *extra], stderr=self.log)
        for _ in range(200):
            if os.path.exists(self.port_file) and open(self.port_file).read().strip():
                break
            if self.proc.poll() is not None:
                raise RuntimeError("the dashboard exited: " + self.log_text())
            time.sleep(0.05)
        self.port = int(open(self.port_file).read())

    def log_text(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def request(self, method, path, body=None, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data

    def get(self, path):
        return self.request("GET", path)

    def json(self, path):
        status, _, data = self.get(path)
        if status != 200:
            raise RuntimeError("GET %s: %d %s" % (path, status, data[:200]))
        return json.loads(data)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=20)
        check(rc == 0, "the dashboard stops on SIGTERM with status 0 (%s)" % rc)


def read_responses(sock, n, timeout):
    """Up to `n` responses (Content-Length framed) read from `sock` within `timeout` s: [(status, headers, body)]."""
    buf, out, deadline = b"", [], time.time() + timeout
    while len(out) < n:
        end = buf.find(b"\r\n\r\n")
        if end >= 0:
            lines = buf[:end].decode("latin-1").split("\r\n")
            headers = dict((k.strip().lower(), v.strip()) for k, v in (l.split(":", 1) for l in lines[1:]))
            length = int(headers.get("content-length", "0"))
            if len(buf) >= end + 4 + length:
                out.append((int(lines[0].split()[1]), headers, buf[end + 4:end + 4 + length]))
                buf = buf[end + 4 + length:]
                continue
        left = deadline - time.time()
        if left <= 0:
            break
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except (socket.timeout, OSError):
            break
        if not chunk:
            break
        buf += chunk
    return out


class Drippers:
    """`n` connections that each send a request head one header line a second and never finish it."""

    def __init__(self, port, n):
        self.socks = []
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /workloads HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            self.socks.append(s)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.drip, daemon=True)
        self.thread.start()
        time.sleep(0.3)  # every connection accepted and its first bytes read

    def drip(self):
        k = 0
        while not self.done.wait(1.0):
            for s in self.socks:
                try:
                    s.sendall(b"X-Drip-%d: x\r\n" % k)
                except OSError:
                    pass  # answered (408) and closed
            k += 1

    def close(self):
        self.done.set()
        self.thread.join()
        for s in self.socks:
            s.close()


def timed_get(port, path, timeout=10):
    """(status, seconds) of one GET on a new connection; status None when it did not answer within `timeout`."""
    t0 = time.time()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        c.close()
        return r.status, time.time() - t0
    except (OSError, http.client.HTTPException):
        return None, time.time() - t0


def slow_clients(store, workdir):
    """The slow-client defects of the thread-per-connection server, on the event loop."""
    d = Dashboard(store, workdir)
    try:
        drippers = Drippers(d.port, 10)
        try:
            status, took = timed_get(d.port, "/healthz")
            check(status == 200 and took < 1.0,
                  "ten dripping clients: /healthz answers within 1 s (%s in %.2f s)" % (status, took))
            status, took = timed_get(d.port, "/api/workloads?per_page=10")
            check(status == 200 and took < 1.0,
                  "ten dripping clients: a page answers within 1 s (%s in %.2f s)" % (status, took))
        finally:
            drippers.close()

        # Pipelining: three requests in one write, three answers in order.
        s = socket.create_connection(("127.0.0.1", d.port), timeout=10)
        s.sendall(b"GET /api/workloads?per_page=10 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                  b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                  b"GET /api/workloads?per_page=11 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answers = read_responses(s, 3, 10)
        s.close()
        try:
            ok = ([a[0] for a in answers] == [200, 200, 200] and len(json.loads(answers[0][2])["verdicts"]) == 10 and
                  json.loads(answers[1][2])["status"] == "ok" and len(json.loads(answers[2][2])["verdicts"]) == 11)
        except (ValueError, KeyError, IndexError):
            ok = False
        check(ok, "three pipelined GETs on one connection get three answers, in order (%d answer(s): %s)" %
              (len(answers), [a[0] for a in answers]))

        # An unfinished head is cut off at the read timeout with a 408, not held.
        s = socket.create_connection(("127.0.0.1", d.port), timeout=10)
        s.sendall(b"GET /workloads HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        t0 = time.time()
        answers = read_responses(s, 1, 10)
        s.close()
        check(answers and answers[0][0] == 408 and time.time() - t0 < 7,
              "a request head that never ends gets 408 at the read timeout (5 s)")
    finally:
        d.stop()

    # SIGTERM with dripping clients connected: stopped within the drain timeout (10 s).
    d = Dashboard(store, workdir)
    drippers = Drippers(d.port, 10)
    try:
        t0 = time.time()
        d.proc.send_signal(signal.SIGTERM)
        try:
            rc = d.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            d.proc.kill()
            rc = d.proc.wait()
            rc = "still running after 20 s"
        took = time.time() - t0
        check(rc == 0 and took <= 11, "SIGTERM with ten dripping clients: exits 0 within the 10 s drain (%s in %.1f s)" %
              (rc, took))
    finally:
        drippers.close()


def host_checks(store, workdir, vid):
    """DNS rebinding: only requests that name this server (Host) are answered."""
    d = Dashboard(store, workdir)
    try:
        port = d.port
        foreign = []
        for path in ("/", "/workloads", "/api/workloads", "/workloads/%d" % vid, "/workloads/%d/verdict.json" % vid,
                     "/api/workloads/%d/timeline" % vid, "/fleet", "/api/fleet/domains", "/api/fleet/offenders",
                     "/api/offenders", "/assets/dashboard.js", "/nope"):
            for host in ("attacker.example:%d" % port, "attacker.example", "localhost.attacker.example:%d" % port,
                         "10.1.2.3:%d" % port):
                status, _, body = d.request("GET", path, headers={"Host": host})
                if status != 421 or b"48213" in body or b"node-02" in body:
                    foreign.append("%s Host %s -> %d" % (path, host, status))
        check(not foreign, "a foreign Host gets 421 on every route, and no data (%s)" % ", ".join(foreign[:4]))
        status, _, body = d.request("GET", "/api/workloads", headers={"Host": "attacker.example"})
        check(b"--allow-host" in body and json.loads(body)["error"]["code"] == "misdirected_request",
              "the 421 says what to do (--allow-host)")
        status, _, _ = d.request("GET", "/healthz", headers={"Host": "attacker.example"})
        check(status == 200, "/healthz answers whatever the Host (%d)" % status)
        local = []
        for host in ("127.0.0.1:%d" % port, "127.0.0.1", "127.0.0.2:%d" % port, "localhost:%d" % port,
                     "LOCALHOST", "[::1]:%d" % port):
            status, _, _ = d.request("GET", "/api/workloads?per_page=10", headers={"Host": host})
            if status != 200:
                local.append("%s -> %d" % (host, status))
        check(not local, "loopback Host names and addresses are answered (%s)" % ", ".join(local))
        for version, want in ((b"1.1", 400), (b"1.0", 200)):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(b"GET /api/workloads?per_page=10 HTTP/" + version + b"\r\n\r\n")
            answers = read_responses(s, 1, 10)
            s.close()
            check(answers and answers[0][0] == want, "no Host header, HTTP/%s: %d (%s)" %
                  (version.decode(), want, answers[0][0] if answers else "no answer"))
        check("not a loopback" not in d.log_text(), "a loopback --listen gives no warning")
    finally:
        d.stop()

    d = Dashboard(store, workdir, extra=("--allow-host", "Dash.Example", "--allow-host", "proxy.internal"))
    try:
        got = [d.request("GET", "/api/workloads?per_page=10", headers={"Host": h})[0]
               for h in ("dash.example:%d" % d.port, "proxy.internal", "other.example", "evil.dash.example")]
        check(got == [200, 200, 421, 421], "--allow-host names are answered, others still 421 (%s)" % got)
    finally:
        d.stop()

    p = subprocess.run([CULPRIT, "dashboard", "--store", store, "--allow-host", "dash.example:80"], capture_output=True,
                       text=True, timeout=30)
    check(p.returncode == 2 and "--allow-host" in p.stderr, "--allow-host with a port is a usage error (%d)" % p.returncode)

    # A non-loopback --listen warns on stderr. 192.0.2.1 (TEST-NET-1) is not
    # this machine's, so nothing is bound beyond loopback: the warning comes
    # before the bind, which then fails (exit 2).
    log = os.path.join(workdir, "nonloopback.log")
    with open(log, "w") as f:
        proc = subprocess.Popen([CULPRIT, "dashboard", "--store", store, "--listen", "192.0.2.1:0"], stderr=f)
    try:
        rc = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=20)
    text = open(log).read()
    check("warning" in text and "not a loopback address" in text and "192.0.2.1" in text,
          "--listen on a non-loopback address warns on stderr (rc %s: %s)" % (rc, text.strip()[:160]))


def overflow_checks(d, where):
    """Time parameters whose int64 nanosecond arithmetic would overflow: a small 400, never a wrapped window."""
    bad = []
    for path, words in (("/api/fleet/domains?from=1700-01-01&to=2200-01-01", b"ten years"),
                        ("/fleet?from=1677-09-22&to=2262-04-10", b"ten years"),
                        ("/api/fleet/unattributed?from=2262-04-01&to=2262-04-11", b"out of range"),
                        ("/api/fleet/offenders?from=1677-09-21", b"1677-09-22"),
                        ("/api/workloads?to=2262-04-11", b"out of range"),
                        ("/api/offenders?since=106751d&until=1700-01-01T00:00:00Z", b"1677-09-22")):
        t0 = time.time()
        status, _, body = d.get(path)
        if status != 400 or words not in body or len(body) > 8192 or time.time() - t0 > 2:
            bad.append("%s -> %d, %d bytes" % (path, status, len(body)))
    check(not bad, "%s: time parameters that would overflow int64 are a small 400 (%s)" % (where, "; ".join(bad)))
    status, _, body = d.get("/api/fleet/domains?from=2262-01-01&to=2262-04-10&bucket=week")
    check(status == 200 and len(json.loads(body)["buckets"]) == 15,
          "%s: weekly bars up to the last day int64 holds: 15 of them, no wrapped step" % where)


def culprit_run(store, log):
    with open(log, "w") as f:
        rc = subprocess.call([CULPRIT, "run", "--config", "static.yaml", "--once", "--store", store, "--format", "none"],
                             cwd=os.path.join(ROOT, "examples", "blueprint"), stderr=f)
    if rc != 0:
        sys.exit("check_dashboard: culprit run --store %s exited %d: %s" % (store, rc, open(log).read()[-2000:]))


# What a database's own error text looks like (pages legitimately say "sqlite:" in
# the footer and have <select> elements, so those words are not evidence).
SQL_WORDS = ("syntax error", "sqlite3", "sqlite_", "unrecognized token", "near \"", "no such column", "sqlstate",
             "error:  ", "pq_", "libpq", "sql logic error", "unterminated quoted")
HOSTILE = ["' OR '1'='1", "x'; DROP TABLE verdicts; --", "\" OR 1=1 --", "1) UNION SELECT verdict_json FROM verdicts --",
           "%' OR 1=1 --", "\\", "a\x00b", "é" * 300, "\xff\xfe", "$1", "?", "'||(SELECT 1)||'"]
PARAMS = ["q", "from", "to", "status", "domain", "sub_domain", "node", "role", "scheduler", "catalog", "sort", "order",
          "page", "per_page"]


def hostile_queries(d, where):
    worst = []
    for param in PARAMS:
        for value in HOSTILE:
            # Raw bytes for the invalid UTF-8 and NUL cases: quote() would encode them validly.
            if value == "\xff\xfe":
                qs = param + "=%FF%FE"
            else:
                qs = urllib.parse.urlencode({param: value})
            for path in ("/workloads?", "/api/workloads?", "/fleet?", "/api/fleet/domains?"):
                status, _, body = d.get(path + qs)
                text = body.decode("utf-8", "replace").lower()
                ok = status == 400 or (status == 200 and (path.startswith("/fleet") or path.startswith("/api/fleet") or
                                                          "no verdicts" in text or '"total": 0' in text))
                leaked = [w for w in SQL_WORDS if w in text]
                if status >= 500 or not ok or leaked:
                    worst.append("%s%s -> %d %s" % (path, qs, status, leaked))
    check(not worst, "%s: hostile values in every filter give 400 or nothing, never an error with SQL (%d requests)%s" %
          (where, len(PARAMS) * len(HOSTILE) * 4, "; " + "; ".join(worst[:5]) if worst else ""))


def check_store(d, where, rows):
    """rows: {id: (workload_id, status, domain, sub_domain, culprit_nodes, verdict_json)} read from the store."""
    total = len(rows)
    j = d.json("/api/workloads?per_page=500")
    check(j["total"] == total and len(j["verdicts"]) == total, "%s: the list holds every verdict (%d)" % (where, total))
    ends = [v["end"] for v in j["verdicts"]]
    check(ends == sorted(ends, reverse=True), "%s: newest first by default" % where)
    for status in ("attributed", "ambiguous", "unattributed", "no_failure"):
        want = sum(1 for r in rows.values() if r[1] == status)
        got = d.json("/api/workloads?per_page=500&status=" + status)
        check(got["total"] == want and all(v["status"] == status for v in got["verdicts"]),
              "%s: status=%s gives the %d verdicts the store has" % (where, status, want))
    got = d.json("/api/workloads?per_page=500&domain=hardware&sub_domain=gpu.memory")
    check(got["total"] == sum(1 for r in rows.values() if r[3] == "gpu.memory"), "%s: domain and sub_domain filter" % where)
    blamed = sum(1 for r in rows.values() if "node-02" in r[4].split(","))
    got = d.json("/api/workloads?per_page=500&node=node-02&role=culprit")
    check(got["total"] == blamed and all("node-02" in v["culprit_nodes"] for v in got["verdicts"]),
          "%s: node=node-02&role=culprit gives the %d verdicts blaming it" % (where, blamed))
    got = d.json("/api/workloads?q=48213")
    check(sorted(v["workload_id"] for v in got["verdicts"]) == ["48213", "48213-by-template"],
          "%s: the job-id search finds the id and the ids it begins" % where)
    page2 = d.json("/api/workloads?per_page=10&page=2&sort=workload&order=asc")
    all_sorted = sorted((r[0], i) for i, r in rows.items())
    check([v["id"] for v in page2["verdicts"]] == [i for _, i in all_sorted[10:20]], "%s: sorted pages" % where)
    check(d.json("/api/workloads?q=no-such-job")["total"] == 0, "%s: a search that matches nothing is empty" % where)

    vid = next(i for i, r in rows.items() if r[0] == "48213-by-template")
    status, headers, body = d.get("/workloads/%d" % vid)
    page = body.decode()
    check(status == 200 and "nvlink.signal_integrity" in page and "node-02" in page and "demoted by" in page,
          "%s: the workload page names the cause, the culprit and the demotions" % where)
    check("default-src 'none'" in headers.get("content-security-policy", ""), "%s: pages carry the CSP" % where)
    check("What to do" in page and "Restart the job without" in page and "Inspect the links of" in page and "0000:61:00" in page
          and ">inspect_link<" not in page and "none</strong> the job" not in page,
          "%s: the workload page shows the recommendation (job and node actions, the GPU)" % where)
    todo = page[page.index('id="recommend-h"'):]
    todo = todo[:todo.index("</section>")]
    check(todo.count("fatal NVLink5 fault") == 1 and "<strong>Why:</strong>" in todo and "· from" not in todo,
          "%s: the actions of one cause say its class and note once, not once per action" % where)
    status, headers, body = d.get("/workloads/%d/verdict.json" % vid)
    check(status == 200 and body.decode() == rows[vid][5], "%s: verdict.json is the stored verdict, byte for byte" % where)
    hid = next(i for i, r in rows.items() if r[0] == "60190")
    status, _, body = d.get("/workloads/%d" % hid)
    hang = body.decode()
    hang = hang[hang.index('class="hang"'):] if 'class="hang"' in hang else ""
    check(status == 200 and "rank 13 on node-02 never started it" in hang and 'Laggards</span> rank 13 on <a' in hang
          and "hang.laggard@node-02#13" in hang and "Flight Recorder dumps" in hang,
          "%s: the workload page of a localised hang says where it is (rank, node, evidence)" % where)
    tl = d.json("/api/workloads/%d/timeline" % vid)
    check(any(s.get("cause") for s in tl["symptoms"]) and len(tl["rows"]) >= 4, "%s: the timeline JSON marks the cause" % where)
    check(d.get("/workloads/999999")[0] == 404 and d.get("/api/workloads/999999/timeline")[0] == 404 and
          d.get("/nope")[0] == 404, "%s: unknown workloads and paths are 404" % where)

    days = sorted(d.json("/api/workloads?per_page=500")["verdicts"], key=lambda v: v["end"])
    rng = "from=%s&to=%s" % (days[0]["end"][:10], days[-1]["end"][:10])
    dom = d.json("/api/fleet/domains?" + rng)
    check(sum(s["total"] for s in dom["series"]) == total, "%s: the fleet's bars count every verdict" % where)
    share = d.json("/api/fleet/unattributed?" + rng)
    unat = sum(1 for r in rows.values() if r[1] == "unattributed")
    check(sum(p["unattributed"] for p in share["points"]) == unat, "%s: the unattributed share counts %d" % (where, unat))
    # Repeat offenders count a node's own faults (hardware, infrastructure),
    # not every verdict that names the node it ran on (docs/recovery.md).
    off = d.json("/api/fleet/offenders?min=1&" + rng)
    check(off["domains"] == ["hardware", "infrastructure"] and off["offenders"] and off["offenders"][0]["node"] == "node-02"
          and off["offenders"][0]["attempts"] == sum(
              1 for r in rows.values() if r[1] == "attributed" and r[2] in ("hardware", "infrastructure")
              and "node-02" in r[4].split(",")),
          "%s: node-02 leads the repeat offenders" % where)
    everything = d.json("/api/offenders?min=1&since=%sT00:00:00Z&until=2100-01-01T00:00:00Z&all=true" % days[0]["end"][:10])
    named = {}
    for r in rows.values():
        if r[1] == "attributed":
            for n in filter(None, r[4].split(",")):
                named[n] = named.get(n, 0) + 1
    check(everything["domains"] == "all" and {o["node"]: o["attempts"] for o in everything["offenders"]} == named,
          "%s: all=true counts every attributed verdict's culprits" % where)
    last = datetime.date.fromisoformat(days[-1]["end"][:10]) + datetime.timedelta(days=1)
    win = d.json("/api/offenders?min=1&since=%sT00:00:00Z&until=%sT00:00:00Z" % (days[0]["end"][:10], last.isoformat()))
    check(win["offenders"] == off["offenders"] and win["min_attempts"] == 1,
          "%s: /api/offenders over the same window agrees with the fleet's list" % where)
    check(d.get("/api/offenders?since=soon")[0] == 400 and d.get("/api/offenders?limit=3")[0] == 400,
          "%s: /api/offenders refuses a bad window and unknown parameters" % where)
    for bad in ("/api/workloads?status=broken", "/api/workloads?from=yesterday", "/api/workloads?per_page=100000",
                "/api/fleet/domains?bucket=hour", "/workloads?sort=verdict_json"):
        status, _, body = d.get(bad)
        check(status == 400 and b"parameter" in body, "%s: %s is a 400 that names the parameter" % (where, bad))

    # Nothing writes: every other method, on every route, before any body is read.
    bad = []
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "PROPFIND"):
        for path in ("/", "/workloads", "/api/workloads", "/workloads/%d" % vid, "/workloads/%d/verdict.json" % vid,
                     "/fleet", "/api/fleet/domains", "/assets/dashboard.js", "/healthz", "/nope"):
            status, headers, _ = d.request(method, path, body=b"status=attributed" if method in ("POST", "PUT") else None)
            if status != 405 or headers.get("allow") != "GET, HEAD":
                bad.append("%s %s -> %d" % (method, path, status))
    check(not bad, "%s: every method but GET and HEAD is 405 with Allow: GET, HEAD (%s)" % (where, ", ".join(bad[:5])))
    status, _, _ = d.request("GET", "/workloads", body=b"x" * 10, headers={"Content-Length": "10"})
    check(status == 400, "%s: a GET with a body is refused" % where)
    status, headers, body = d.request("HEAD", "/workloads")
    check(status == 200 and not body, "%s: HEAD answers without a body" % where)
    hostile_queries(d, where)
    overflow_checks(d, where)
    health = d.json("/healthz")
    check(health["read_only"] is True and health["status"] == "ok", "%s: /healthz says read-only" % where)


def sqlite_rows(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    return {r[0]: r[1:] for r in db.execute("SELECT id, workload_id, status, domain, sub_domain, culprit_nodes, verdict_json "
                                            "FROM verdicts")}


def usage_errors(workdir, good_store):
    def run(*args):
        p = subprocess.run([CULPRIT, "dashboard", *args], capture_output=True, text=True, timeout=30)
        return p.returncode, p.stderr

    rc, err = run("--store", "sqlite:%s/missing.db" % workdir, "--listen", "127.0.0.1:0")
    check(rc == 3 and "missing.db" in err and not os.path.exists(os.path.join(workdir, "missing.db")),
          "a missing SQLite store: exit 3, a message, and no file created (%d: %s)" % (rc, err.strip()[:120]))
    other = os.path.join(workdir, "other.db")
    sqlite3.connect(other).execute("CREATE TABLE t (x)")
    rc, err = run("--store", "sqlite:" + other, "--listen", "127.0.0.1:0")
    check(rc == 3 and "not a Culprit store" in err, "a SQLite file that is not a store: exit 3 (%s)" % err.strip()[:120])
    rc, err = run("--store", "postgresql://u:secret@127.0.0.1/db")
    check(rc == 2 and "password" in err and "secret" not in err, "a password in the URL is refused, not echoed")
    rc, err = run("--listen", "nowhere")
    check(rc == 2 and "HOST:PORT" in err, "a bad --listen is a usage error")
    rc, out = subprocess.run([CULPRIT, "dashboard", "--help"], capture_output=True, text=True).returncode, ""
    check(rc == 0, "--help exits 0")
    # An address in use: exit 2.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    rc, err = run("--store", good_store, "--listen", "127.0.0.1:%d" % s.getsockname()[1])
    s.close()
    check(rc == 2 and "cannot listen" in err, "an address in use: exit 2 (%s)" % err.strip()[:120])

    # A FIFO (or a directory) as the SQLite store: refused at once, exit 3. A
    # FIFO used to block both commands for ever (SQLite opened it, waiting
    # for a writer).
    fifo = os.path.join(workdir, "fifo.db")
    os.mkfifo(fifo)
    for cmd, path, what in ((["dashboard", "--listen", "127.0.0.1:0"], fifo, "a FIFO"), (["offenders"], fifo, "a FIFO"),
                            (["dashboard", "--listen", "127.0.0.1:0"], workdir, "a directory"),
                            (["offenders"], workdir, "a directory")):
        t0 = time.time()
        try:
            p = subprocess.run([CULPRIT, cmd[0], "--store", "sqlite:" + path, *cmd[1:]], capture_output=True, text=True,
                               timeout=10)
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            rc, err = None, "still blocked after 10 s"
        check(rc == 3 and what in err and "not a regular file" in err and time.time() - t0 < 5,
              "%s as the store of `culprit %s`: exit 3 at once (%s: %s)" % (what, cmd[0], rc, err.strip()[:160]))


def postgresql(workdir):
    pgbin = sorted((p for p in os.listdir("/usr/lib/postgresql") if os.path.exists("/usr/lib/postgresql/%s/bin/initdb" % p)),
                   key=lambda v: [int(x) for x in v.split(".")])
    if not pgbin:
        sys.exit("check_dashboard: PostgreSQL server binaries not found (apt-get install postgresql)")
    pgbin = "/usr/lib/postgresql/%s/bin" % pgbin[-1]
    pg = os.path.join(workdir, "pg")
    os.makedirs(pg)
    shutil.chown(pg, "postgres", "postgres")
    os.chmod(workdir, 0o755)
    port = free_port()
    as_pg = ["runuser", "-u", "postgres", "--"]
    subprocess.run(as_pg + [pgbin + "/initdb", "-D", pg + "/data", "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8",
                            "--locale=C.UTF-8"], check=True, capture_output=True)
    # In the foreground of a child we own, so it is stopped by its PID.
    server = subprocess.Popen(as_pg + [pgbin + "/postgres", "-D", pg + "/data", "-c", "listen_addresses=127.0.0.1", "-p",
                                       str(port), "-k", pg, "-c", "fsync=off", "-c", "synchronous_commit=off"],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(workdir, "pg.log"), "w"))
    for _ in range(100):
        if subprocess.call(["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-c", "SELECT 1",
                            "postgres"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
            break
        time.sleep(0.1)
    subprocess.run(["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-c", "CREATE DATABASE culprit",
                    "postgres"], check=True)
    return server, "postgresql://postgres@127.0.0.1:%d/culprit" % port, port


def psql(port, sql):
    return subprocess.run(["psql", "-X", "-q", "-A", "-t", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-c", sql,
                           "culprit"], check=True, capture_output=True, text=True).stdout


def main():
    workdir = tempfile.mkdtemp(prefix="culprit-dashboard.")
    server = None
    try:
        db = os.path.join(workdir, "store.db")
        culprit_run("sqlite:" + db, os.path.join(workdir, "run.log"))
        before = hashlib.sha256(open(db, "rb").read()).hexdigest()
        rows = sqlite_rows(db)
        d = Dashboard("sqlite:" + db, workdir)
        try:
            check_store(d, "SQLite", rows)
        finally:
            d.stop()
        log = d.log_text()
        check("serving sqlite:" in log and "on http://127.0.0.1:" in log, "the dashboard says what it serves and where")
        check(hashlib.sha256(open(db, "rb").read()).hexdigest() == before and
              (not os.path.exists(db + "-wal") or os.path.getsize(db + "-wal") == 0),
              "SQLite: the store's bytes are unchanged after every request above")
        usage_errors(workdir, "sqlite:" + db)
        slow_clients("sqlite:" + db, workdir)
        host_checks("sqlite:" + db, workdir, next(i for i, r in rows.items() if r[0] == "48213-by-template"))

        if WITH_PG:
            server, url, port = postgresql(workdir)
            culprit_run(url, os.path.join(workdir, "run-pg.log"))
            dump = subprocess.run([sys.executable, os.path.join(HERE, "..", "blueprint", "dump_store.py"), url], check=True,
                                  capture_output=True).stdout
            psql(port, "SELECT pg_stat_force_next_flush()")
            counts_sql = ("SELECT COALESCE(SUM(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables")
            time.sleep(1.2)
            writes_before = psql(port, counts_sql).strip()
            pg_rows = {}
            for line in psql(port, "SELECT json_build_array(id, workload_id, status, domain, sub_domain, culprit_nodes, "
                                   "verdict_json) FROM verdicts").splitlines():
                r = json.loads(line)
                pg_rows[r[0]] = tuple(r[1:])
            d = Dashboard(url, workdir)
            try:
                check_store(d, "PostgreSQL", pg_rows)
                # The session is read-only on the server's side, not only by our SQL.
                sessions = psql(port, "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = 'culprit' AND pid <> pg_backend_pid()")
                check(int(sessions) >= 1, "PostgreSQL: the dashboard holds its own sessions (%s)" % sessions.strip())
            finally:
                d.stop()
            time.sleep(1.2)
            psql(port, "SELECT pg_stat_force_next_flush()")
            writes_after = psql(port, counts_sql).strip()
            check(writes_after == writes_before, "PostgreSQL: no tuple inserted, updated or deleted (%s -> %s)" %
                  (writes_before, writes_after))
            again = subprocess.run([sys.executable, os.path.join(HERE, "..", "blueprint", "dump_store.py"), url], check=True,
                                   capture_output=True).stdout
            check(again == dump, "PostgreSQL: the store's rows are unchanged")
    finally:
        if server:
            # The postmaster's own PID (runuser does not pass signals on): SIGINT is a fast shutdown.
            with open(os.path.join(workdir, "pg", "data", "postmaster.pid")) as f:
                os.kill(int(f.readline()), signal.SIGINT)
            server.wait(timeout=60)
        shutil.rmtree(workdir, ignore_errors=True)
    print("check_dashboard: %s" % ("%d check(s) failed" % len(failures) if failures else "all checks passed"))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
