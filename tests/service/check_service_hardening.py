#!/usr/bin/env python3
"""`culprit serve` against hostile and broken clients (issue 12): slow
clients, deep and huge contexts, memory pressure, keep-alive hogs,
pipelining, malformed framing, draining with slow clients connected. Each
case names its defect; every case runs, then the failures are listed.

  tests/service/check_service_hardening.py BIN     (run from the repository root)

The real binary on a free loopback port, raw sockets and http.client.
"""
import gzip
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

BIN = os.path.abspath(sys.argv[1])
TMP = tempfile.mkdtemp(prefix="culprit-service-hardening-")
failures = []
passed = 0


class Server:
    def __init__(self, *args, name="s"):
        self.port_file = os.path.join(TMP, f"{name}.port")
        self.log_path = os.path.join(TMP, f"{name}.log")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:0", "--port-file", self.port_file,
                                      "--no-access-log", *args], stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.time() + 300
        while not os.path.exists(self.port_file):
            if self.proc.poll() is not None:
                raise AssertionError(f"culprit serve {' '.join(args)} exited {self.proc.returncode}: "
                                     f"{open(self.log_path).read()[-800:]}")
            if time.time() > deadline:
                raise AssertionError("culprit serve did not become ready")
            time.sleep(0.05)
        self.port = int(open(self.port_file).read())

    def request(self, method, path, body=None, headers=None, timeout=60):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, dict(r.getheaders()), data

    def raw(self, data, timeout=10, until_close=True):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        s.sendall(data)
        out = b""
        try:
            while True:
                c = s.recv(65536)
                if not c:
                    break
                out += c
                if not until_close and b"\r\n\r\n" in out:
                    break
        except socket.timeout:
            pass
        s.close()
        return out

    def cpu_seconds(self):
        # utime + stime of the process (fields 14 and 15 of /proc/PID/stat).
        fields = open(f"/proc/{self.proc.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def vm(self, key):
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith(key):
                return int(line.split()[1]) // 1024
        return 0

    def stop(self, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def case(name):
    def wrap(fn):
        global passed, main
        if main.proc.poll() is not None:  # an earlier case killed it: later cases still get a server
            failures.append(f"(the main server had exited with {main.proc.returncode}; restarted)")
            main = Server("--threads", "4", name=f"main{len(failures)}")
        try:
            fn()
            passed += 1
            print(f"ok   {name}")
        except Exception as e:
            failures.append(f"{name}: {type(e).__name__}: {e}")
            print(f"FAIL {name}: {type(e).__name__}: {e}", file=sys.stderr)
        return fn
    return wrap


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


# Under AddressSanitizer (scripts/sanitize.sh sets CULPRIT_TEST_SANITIZED=1
# and ASAN_OPTIONS)
# the process holds shadow memory, redzones and a quarantine, and runs a few
# times slower: the time and RSS bounds below measure the plain build, so
# there they are reported, not asserted. Every status and behaviour check
# still holds.
SANITIZED = os.environ.get("CULPRIT_TEST_SANITIZED") == "1" or "ASAN_OPTIONS" in os.environ


def expect_bound(cond, msg):
    if cond:
        return
    if SANITIZED:
        print(f"     (bound not asserted under the sanitizers: {msg})")
        return
    raise AssertionError(msg)


# Wall time depends on what else the machine runs (CI and the shared
# development machines are loaded), so latencies and durations are printed,
# never asserted: each case asserts statuses and resource bounds (RSS, CPU
# time) instead, and a hang still fails by its socket or wait timeout.
# Latency figures are measured by hand (tests/service/check_load.py).
def report_time(cond, msg):
    if not cond:
        print(f"     (slow, not asserted: {msg})")


def error_of(data):
    return json.loads(data)["error"]


def healthz_ms(port):
    t0 = time.time()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", "/healthz")
    r = c.getresponse()
    r.read()
    c.close()
    return (time.time() - t0) * 1000, r.status


J = {"Content-Type": "application/json"}
N = {"Content-Type": "application/x-ndjson"}
CTX = {"workload_id": "h", "nodes": ["node-01", "node-02"]}
SMALL = (json.dumps(CTX) + "\n" + "".join(
    json.dumps({"host": "node-01", "source": "app", "text": f"step {i} ok"}) + "\n" for i in range(50))).encode()

main = None
try:
    main = Server("--threads", "4", name="main")
except AssertionError as e:
    print(f"FAIL: {e}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------- 1, 4
@case("1: a context nested 100,000 deep is refused (limit json_depth) and the service lives")
def _():
    d = 100000
    body = '{"workload_id":"x","nodes":[' + "[" * d + "]" * d + "]}"
    st, _, data = main.request("POST", "/v1/workloads", body, J)
    expect(st == 400 and error_of(data)["code"] == "limit_exceeded" and error_of(data)["details"]["name"] == "json_depth",
           f"{st} {data[:300]!r}")
    st, _, data = main.request("POST", "/v1/attributions", json.dumps({"context": "x"})[:-1] + "[" * d + "]" * d + "}", J)
    expect(st == 400, f"one-shot: {st} {data[:200]!r}")
    expect(healthz_ms(main.port)[1] == 200, "the service died")


@case("4: a context of 1,000,000 nodes is refused within its memory bound, not 2 GB")
def _():
    body = json.dumps({"workload_id": "many", "nodes": [f"n{i:07d}" for i in range(1000000)]})
    hwm0 = main.vm("VmHWM")
    cpu0 = main.cpu_seconds()
    t0 = time.time()
    st, _, data = main.request("POST", "/v1/workloads", body, J)
    took = time.time() - t0
    e = error_of(data)
    expect(st in (400, 413) and e["details"].get("name") in ("context_nodes", "context_bytes"), f"{st} {e}")
    # Memory is the sharp check (2.17 GB before the fix); the service's CPU
    # time a loose one (7.4 s of wall time before the fix on a quiet
    # machine, under 1 s after; CPU time does not grow with the machine's
    # load as wall time does).
    grown = main.vm("VmHWM") - hwm0
    cpu = main.cpu_seconds() - cpu0
    expect_bound(grown < 256, f"peak RSS grew by {grown:.0f} MB")
    expect_bound(cpu < 5, f"the service spent {cpu:.1f} s of CPU on it")
    report_time(took < 5, f"answered after {took:.1f}s")


# ---------------------------------------------------------------- 2
@case("2: 200 slow clients (a header line every 2 s): /healthz within 100 ms, requests answered")
def _():
    stop = threading.Event()
    socks = []
    for _ in range(200):
        s = socket.create_connection(("127.0.0.1", main.port), timeout=30)
        s.sendall(b"POST /v1/attributions HTTP/1.1\r\nHost: localhost\r\n")
        socks.append(s)

    def drip():
        i = 0
        while not stop.is_set():
            for s in socks:
                try:
                    s.sendall(f"X-Slow-{i}: y\r\n".encode())
                except OSError:
                    pass
            i += 1
            stop.wait(2)

    t = threading.Thread(target=drip)
    t.start()
    try:
        time.sleep(1)
        worst = 0
        for _ in range(20):
            ms, st = healthz_ms(main.port)
            expect(st == 200, f"/healthz {st}")
            worst = max(worst, ms)
            time.sleep(0.1)
        st, _, _ = main.request("POST", "/v1/attributions", SMALL, N, timeout=30)
        expect(st == 200, f"an attribution under slow clients: {st}")
        st, _, _ = main.request("GET", "/v1/catalog", timeout=30)
        expect(st == 200, f"/v1/catalog under slow clients: {st}")
        # Before the fix 8 slow clients left 0 of 3 requests answered at all.
        report_time(worst < 100, f"/healthz took {worst:.0f} ms")
    finally:
        stop.set()
        t.join()
        for s in socks:
            s.close()


@case("2: a request whose head does not arrive within --header-timeout gets 408")
def _():
    srv = Server("--header-timeout", "2s", "--request-timeout", "4s", "--threads", "2", name="hdr")
    try:
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        s.sendall(b"GET /healthz HTTP/1.1\r\n")
        t0 = time.time()
        out = b""
        while True:
            c = s.recv(4096)
            if not c:
                break
            out += c
        s.close()
        expect(out.startswith(b"HTTP/1.1 408") and b"request_timeout" in out, f"{out[:200]!r}")
        # Without a head deadline the recv above fails by its 10 s timeout.
        report_time(time.time() - t0 < 4, f"after {time.time() - t0:.1f}s")
        # A body that trickles in is cut by --request-timeout, not by each read.
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=20)
        s.sendall(b"POST /v1/attributions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
        t0 = time.time()
        out = b""
        s.settimeout(1)
        while time.time() - t0 < 15:
            try:
                s.sendall(b" ")
                c = s.recv(4096)
                if not c:
                    break
                out += c
            except socket.timeout:
                continue
            except OSError:
                break
        s.close()
        # A per-read timeout never fires on a body that keeps trickling: the
        # 408 within the 15 s loop is the whole-request deadline at work.
        expect(b" 408 " in out, f"trickled body: {out[:200]!r}")
        report_time(time.time() - t0 < 7, f"trickled body cut after {time.time() - t0:.1f}s")
    finally:
        srv.stop()


# ---------------------------------------------------------------- 3
@case("3: 6 concurrent 24 MB NDJSON bodies stay within --max-total-bytes 256M")
def _():
    srv = Server("--threads", "6", "--max-total-bytes", "256M", "--max-body", "64M", name="mem")
    try:
        lines = [json.dumps(CTX)] + [json.dumps({"host": "node-0%d" % (i % 2 + 1), "source": "app",
                                                 "text": f"2026-03-14T02:03:{i % 60:02d}Z step {i} loss 1.2345 lr 0.0003 ok"})
                                     for i in range(240000)]
        body = ("\n".join(lines) + "\n").encode()
        base = srv.vm("VmRSS")
        statuses = []

        def one():
            try:
                st, _, _ = srv.request("POST", "/v1/attributions", body, N, timeout=300)
                statuses.append(st)
            except Exception as e:
                statuses.append(repr(e))

        ts = [threading.Thread(target=one) for _ in range(6)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        peak = srv.vm("VmHWM")
        expect(all(s in (200, 413, 429) for s in statuses), f"statuses {statuses}")
        expect_bound(peak - base < 256 + 96, f"peak RSS {peak} MB from {base} MB with a 256 MB budget (statuses {statuses})")
        expect(healthz_ms(srv.port)[1] == 200, "the service died")
    finally:
        srv.stop()


# ---------------------------------------------------------------- 11
@case("11: SIGTERM with slow clients connected: the process ends within the drain deadline")
def _():
    srv = Server("--threads", "2", name="drain")
    socks = []
    for _ in range(8):
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=60)
        s.sendall(b"POST /v1/attributions HTTP/1.1\r\nHost: localhost\r\n")
        socks.append(s)
    stop = threading.Event()

    def drip():  # a header line every 2 s: never idle long enough for a per-read timeout
        i = 0
        while not stop.is_set():
            for s in socks:
                try:
                    s.sendall(f"X-Slow-{i}: y\r\n".encode())
                except OSError:
                    pass
            i += 1
            stop.wait(2)

    t = threading.Thread(target=drip)
    t.start()
    time.sleep(0.5)
    t0 = time.time()
    srv.proc.send_signal(signal.SIGTERM)
    try:
        rc = srv.proc.wait(20)
    except subprocess.TimeoutExpired:
        rc = None
    took = time.time() - t0
    stop.set()
    t.join()
    for s in socks:
        s.close()
    srv.stop()
    expect(rc == 0, f"exit {rc} after {took:.1f}s")
    # Without a drain deadline the process outlives the 20 s wait (rc None).
    report_time(took < 13, f"exit after {took:.1f}s (default --drain-timeout 10s)")


# ---------------------------------------------------------------- 12
@case("12: 16 busy keep-alive connections do not starve new ones")
def _():
    stop = threading.Event()

    def hog():
        c = http.client.HTTPConnection("127.0.0.1", main.port, timeout=60)
        while not stop.is_set():
            c.request("POST", "/v1/attributions", SMALL, N)
            c.getresponse().read()
        c.close()

    ts = [threading.Thread(target=hog) for _ in range(16)]
    [t.start() for t in ts]
    try:
        time.sleep(1)
        worst = max(healthz_ms(main.port)[0] for _ in range(10))
        st, _, body = main.request("POST", "/v1/workloads", json.dumps({"workload_id": "fresh", "nodes": ["n1"]}), J)
        expect(st == 201, f"create {st}")
        sid = json.loads(body)["id"]
        t0 = time.time()
        st, _, _ = main.request("GET", f"/v1/workloads/{sid}")
        fresh = time.time() - t0
        main.request("DELETE", f"/v1/workloads/{sid}")
        report_time(worst < 100, f"a fresh /healthz took {worst:.0f} ms")
        expect(st == 200, f"a fresh worker request: {st}")
        report_time(fresh < 1.5, f"a fresh worker request took {fresh:.2f}s")
    finally:
        stop.set()
        [t.join() for t in ts]


# ---------------------------------------------------------------- 14, 16
@case("14: three pipelined requests get three answers, in order")
def _():
    req = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\nGET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\nGET /nothing HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    out = main.raw(req)
    heads = re.findall(rb"HTTP/1\.1 (\d\d\d) ", out)
    expect(heads == [b"200", b"200", b"404"], f"{heads}")
    post = (b"POST /v1/attributions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-ndjson\r\nContent-Length: "
            + str(len(SMALL)).encode() + b"\r\n\r\n" + SMALL + b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    out = main.raw(post, timeout=30)
    heads = re.findall(rb"HTTP/1\.1 (\d\d\d) ", out)
    expect(heads == [b"200", b"200"], f"POST + GET pipelined: {heads}")


@case("16: a duplicate Content-Length is 400 (RFC 9112 6.3)")
def _():
    body = json.dumps({"workload_id": "dup-cl", "nodes": ["n1"]}).encode()
    cl = b"Content-Length: %d\r\n" % len(body)
    out = main.raw(b"POST /v1/workloads HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" + cl + cl + b"\r\n" + body)
    expect(out.startswith(b"HTTP/1.1 400") and b"Content-Length" in out, f"{out[:200]!r}")


@case("16: malformed framing and oversized heads get their status")
def _():
    cases = [
        (b"POST /v1/workloads HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", b"400"),
        (b"POST /v1/workloads HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", b"501"),
        (b"GET /healthz HTTP/2.0\r\nHost: localhost\r\n\r\n", b"505"),
        (b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n", b"431"),
        (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n", b"414"),
        (b"GET /healthz HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(150)) + b"\r\n", b"431"),
        (b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n folded\r\n\r\n", b"400"),
        (b"POST /v1/workloads HTTP/1.1\r\nHost: localhost\r\nContent-Length: -1\r\n\r\n", b"400"),
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 tls hello\r\n\r\n", b"400"),
    ]
    for raw, want in cases:
        out = main.raw(raw)
        expect(out[9:12] == want, f"{raw[:60]!r}: {out[:120]!r}, want {want!r}")
    expect(healthz_ms(main.port)[1] == 200, "the service died")


# ---------------------------------------------------------------- 20
@case("20: Content-Encoding br is 415, gzip is read, a gzip bomb is 413")
def _():
    st, _, data = main.request("POST", "/v1/attributions", b"\x00\x01", {**N, "Content-Encoding": "br"})
    expect(st == 415 and error_of(data)["code"] == "unsupported_media_type", f"br: {st} {data[:200]!r}")
    st, _, data = main.request("POST", "/v1/attributions", gzip.compress(SMALL), {**N, "Content-Encoding": "gzip"})
    expect(st == 200, f"gzip: {st} {data[:200]!r}")
    bomb = gzip.compress(json.dumps(CTX).encode() + b"\n" + b" \n" * (40 << 20))
    st, _, data = main.request("POST", "/v1/attributions", bomb, {**N, "Content-Encoding": "gzip"})
    expect(st == 413 and error_of(data)["details"].get("name") == "max_body", f"bomb: {st} {data[:200]!r}")


@case("20: the bearer scheme is case-insensitive")
def _():
    tf = os.path.join(TMP, "token")
    open(tf, "w").write("tok-123\n")
    srv = Server("--token-file", tf, "--threads", "2", name="tok")
    try:
        for scheme in ("Bearer", "bearer", "BEARER"):
            st, _, _ = srv.request("GET", "/v1/catalog", headers={"Authorization": f"{scheme} tok-123"})
            expect(st == 200, f"'{scheme}': {st}")
        st, _, _ = srv.request("GET", "/v1/catalog", headers={"Authorization": "Bearer wrong"})
        expect(st == 401, f"a wrong token: {st}")
    finally:
        srv.stop()


# ---------------------------------------------------------------- limits
@case("connections over --max-connections get 503; a connection is closed after 1000 answers")
def _():
    srv = Server("--max-connections", "4", "--threads", "2", name="conns")
    try:
        # Every connection with a request in progress (its head begun):
        # nothing can be closed to make room.
        held = [socket.create_connection(("127.0.0.1", srv.port), timeout=10) for _ in range(4)]
        for s in held:
            s.sendall(b"GET /healthz HTTP/1.1\r\n")
        time.sleep(0.3)
        out = srv.raw(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        expect(out.startswith(b"HTTP/1.1 503"), f"{out[:100]!r}")
        for s in held:
            s.close()
        time.sleep(0.3)
        out = srv.raw(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n" * 1005, timeout=30)
        n = out.count(b"HTTP/1.1 200")
        expect(n == 1000, f"{n} answers on one connection")
    finally:
        srv.stop()


@case("issue 38: --max-connections idle sockets do not make /healthz answer 503")
def _():
    srv = Server("--max-connections", "4", "--threads", "2", name="idle")
    try:
        # Four sockets that never send anything...
        held = [socket.create_connection(("127.0.0.1", srv.port), timeout=10) for _ in range(4)]
        time.sleep(0.3)
        for i in range(3):
            out = srv.raw(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            expect(out.startswith(b"HTTP/1.1 200"), f"with 4 idle sockets, /healthz #{i}: {out[:100]!r}")
        for s in held:
            s.close()
        # ...and four keep-alive connections waiting after an answer.
        kept = []
        for _ in range(4):
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            expect(s.recv(4096).startswith(b"HTTP/1.1 200"), "a keep-alive request")
            kept.append(s)
        out = srv.raw(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        expect(out.startswith(b"HTTP/1.1 200"), f"with 4 idle keep-alive connections: {out[:100]!r}")
        for s in kept:
            s.close()
    finally:
        srv.stop()


@case("issue 38: without a token a foreign Host gets 421 (DNS rebinding); the probes stay open")
def _():
    for path in ("/v1/catalog", "/v1/openapi.json"):
        out = main.raw(f"GET {path} HTTP/1.1\r\nHost: attacker.example:{main.port}\r\nConnection: close\r\n\r\n".encode())
        expect(out.startswith(b"HTTP/1.1 421 Misdirected Request"), f"{path}: {out[:100]!r}")
        body = json.loads(out.split(b"\r\n\r\n", 1)[1])
        expect(body["error"]["code"] == "misdirected_request", f"{body}")
    post = main.raw(b"POST /v1/workloads HTTP/1.1\r\nHost: attacker.example\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
    expect(post.startswith(b"HTTP/1.1 421"), f"POST: {post[:100]!r}")
    for host in ("localhost", f"127.0.0.1:{main.port}", "127.9.9.9", "[::1]:1"):
        out = main.raw(f"GET /v1/catalog HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        expect(out.startswith(b"HTTP/1.1 200"), f"Host {host}: {out[:100]!r}")
    for path in ("/healthz", "/readyz", "/metrics"):
        out = main.raw(f"GET {path} HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n".encode())
        expect(out.startswith(b"HTTP/1.1 200"), f"{path}: {out[:100]!r}")


@case("issue 38: with a token Host is checked only when --allow-host is given")
def _():
    tf = os.path.join(TMP, "token-hosts")
    open(tf, "w").write("tok-456\n")
    auth = "Authorization: Bearer tok-456\r\n"
    srv = Server("--token-file", tf, "--threads", "2", name="tokhost")
    named = Server("--token-file", tf, "--threads", "2", "--allow-host", "culprit.internal", name="allowhost")
    try:
        out = srv.raw(f"GET /v1/catalog HTTP/1.1\r\nHost: anything.example\r\n{auth}Connection: close\r\n\r\n".encode())
        expect(out.startswith(b"HTTP/1.1 200"), f"token, no --allow-host: {out[:100]!r}")
        out = named.raw(f"GET /v1/catalog HTTP/1.1\r\nHost: anything.example\r\n{auth}Connection: close\r\n\r\n".encode())
        expect(out.startswith(b"HTTP/1.1 421"), f"token and --allow-host, a foreign Host: {out[:100]!r}")
        out = named.raw(f"GET /v1/catalog HTTP/1.1\r\nHost: CULPRIT.internal:443\r\n{auth}Connection: close\r\n\r\n".encode())
        expect(out.startswith(b"HTTP/1.1 200"), f"token and --allow-host, the allowed name: {out[:100]!r}")
    finally:
        srv.stop()
        named.stop()


@case("issue 38: a token-less service on a non-loopback address warns on stderr")
def _():
    # 192.0.2.1 (TEST-NET-1) is not this machine's: binding fails, after the warning.
    p = subprocess.run([BIN, "serve", "--listen", "192.0.2.1:0", "--no-access-log"], capture_output=True, timeout=60)
    err = p.stderr.decode(errors="replace")
    expect(p.returncode == 2, f"exit {p.returncode}: {err[-300:]}")
    expect("warning: --listen 192.0.2.1 is not a loopback address and there is no --token-file" in err, err[-400:])
    tf = os.path.join(TMP, "token-warn")
    open(tf, "w").write("tok-789\n")
    p = subprocess.run([BIN, "serve", "--listen", "192.0.2.1:0", "--token-file", tf, "--no-access-log"],
                       capture_output=True, timeout=60)
    expect("warning" not in p.stderr.decode(errors="replace"), f"with a token: {p.stderr[-300:]!r}")
    expect("warning" not in open(main.log_path, errors="replace").read(), "the loopback main server warned")


@case("issue 38: NDJSON posted to /v1/workloads is told which routes take NDJSON")
def _():
    st, _, data = main.request("POST", "/v1/workloads", body=b'{"workload_id":"w","nodes":["n1"]}\n',
                               headers={"Content-Type": "application/x-ndjson"})
    expect(st == 415, f"{st} {data[:200]!r}")
    msg = json.loads(data)["error"]["message"]
    expect("/v1/workloads/{id}/observations" in msg and "/v1/attributions" in msg, msg)
    expect("send application/json or application/x-ndjson" not in msg, msg)


@case("issue 38: a context of 32,768 nodes and no evidence gets an answer of at most 3 times its size")
def _():
    ctx = {"workload_id": "amp", "nodes": [f"node-{i:05d}-" + "x" * 96 for i in range(32768)]}
    body = (json.dumps(ctx) + "\n").encode()
    st, _, data = main.request("POST", "/v1/attributions", body=body, headers={"Content-Type": "application/x-ndjson"},
                               timeout=300)
    expect(st == 200, f"{st} {data[:200]!r}")
    expect(len(data) <= 3 * len(body), f"a {len(body)}-byte request got a {len(data)}-byte answer")
    v = json.loads(data)
    expect(len(v["coverage"]["nodes_without_logs"]) == 32768, "nodes_without_logs is no longer complete")
    for name, sc in v["coverage"]["sources"].items():
        expect(len(sc["nodes_missing"]) == 64 and sc["nodes_expected"] - len(sc["nodes_with_data"]) == 32768,
               f"{name}: {len(sc['nodes_missing'])} names listed")
    expect(any("… and 32704 more" in w for w in v["coverage"]["warnings"]), f"{[w[-60:] for w in v['coverage']['warnings']]}")


main.stop()
rc = main.proc.returncode
if rc != 0:
    failures.append(f"the main server exited {rc} after SIGTERM")
print(f"{passed} passed, {len(failures)} failed")
if failures:
    for f in failures:
        print(f"  - {f}", file=sys.stderr)
    sys.exit(1)
