#!/usr/bin/env python3
"""Load with slow clients: `culprit serve` under wrk while slow clients hold
connections open (issue 12).

  tests/service/check_load.py BIN [--duration S] [--connections N] [--slow N]
                              [--body small|example] [--threads N]

Starts the service on a free loopback port; opens --slow connections that
send one header line every 5 s and never finish (they are cut by the header
deadline and reconnect, so --slow stay connected throughout); runs wrk for
--duration seconds at --connections POSTing one-shot attributions; probes
GET /healthz on a fresh connection every 100 ms all along. Prints requests,
errors, latency percentiles, RSS before and after, and the /healthz
latencies; fails unless wrk saw 0 errors (socket errors and non-2xx), every
probe answered within 100 ms, and RSS after is within 64 MB of RSS after
the warm-up.

Then the overload phase (--overload-seconds, 0 to skip): a second service
with a small memory budget (--budget, default 256M) gets --overload-clients
concurrent 8 MB NDJSON bodies (80,000 short lines, about 640 MB held if
all were admitted) for that long. Prints admitted (200) and refused (429)
requests, their latency, and peak RSS against the budget; fails on any
other status or a broken connection, if nothing was refused or nothing
admitted, or if peak RSS exceeds the idle RSS plus the budget plus 64 MB.
"""
import argparse
import http.client
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("bin")
ap.add_argument("--duration", type=int, default=60)
ap.add_argument("--connections", type=int, default=64)
ap.add_argument("--slow", type=int, default=200)
ap.add_argument("--threads", type=int, default=8, help="server worker threads")
ap.add_argument("--body", choices=["small", "example"], default="small")
ap.add_argument("--overload-seconds", type=int, default=20)
ap.add_argument("--overload-clients", type=int, default=16)
ap.add_argument("--budget", default="256M", help="--max-total-bytes of the overloaded service")
args = ap.parse_args()

tmp = tempfile.mkdtemp(prefix="culprit-load-")
srv = None


def start(name, *extra):
    """Starts `culprit serve` on a free loopback port; returns (process, port)."""
    global srv
    port_file = os.path.join(tmp, f"{name}.port")
    log = open(os.path.join(tmp, f"{name}.log"), "wb")
    srv = subprocess.Popen([os.path.abspath(args.bin), "serve", "--listen", "127.0.0.1:0", "--port-file", port_file,
                            "--no-access-log", *extra], stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.time() + 300
    while not os.path.exists(port_file) or not open(port_file).read().strip():
        if srv.poll() is not None or time.time() > deadline:
            fail(f"the service ({name}) did not start")
        time.sleep(0.1)
    port = int(open(port_file).read())
    # Ready: the catalog compiled and self-tested.
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/readyz")
            r = c.getresponse()
            r.read()
            c.close()
            if r.status == 200:
                return srv, port
        except OSError:
            pass
        if srv.poll() is not None or time.time() > deadline:
            fail(f"the service ({name}) did not become ready")
        time.sleep(0.2)


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    if srv is not None and srv.poll() is None:
        srv.send_signal(signal.SIGTERM)
        srv.wait(30)
    sys.exit(1)


def rss_mb(key="VmRSS"):
    for line in open(f"/proc/{srv.pid}/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024
    return 0.0


srv, port = start("load", "--threads", str(args.threads))


# The request body: a small job (50 lines, one XID) or the nvlink-xid149
# example bundle (2.9 MB, ~18,000 observations), as `diagnose --server` sends.
if args.body == "small":
    ctx = {"workload_id": "load", "nodes": ["node-01", "node-02"]}
    lines = [json.dumps(ctx)]
    for i in range(50):
        lines.append(json.dumps({"host": "node-0%d" % (i % 2 + 1), "source": "app", "text": f"[2026-03-14 02:03:{i:02d}] step {i} ok"}))
    lines.append(json.dumps({"host": "node-02", "source": "kernel",
                             "text": "Mar 14 02:03:17 node-02 kernel: [233354.402118] NVRM: Xid (PCI:0000:61:00): 79, pid=1, GPU has fallen off the bus."}))
    body = "\n".join(lines) + "\n"
else:
    ex = "examples/nvlink-xid149"
    lines = [open(f"{ex}/context.json").read().replace("\n", " ")]
    for host in sorted(os.listdir(f"{ex}/logs")):
        for name in sorted(os.listdir(f"{ex}/logs/{host}")):
            rel = f"logs/{host}/{name}"
            data = open(f"{ex}/{rel}", "rb").read().decode()
            pos, n = 0, 0
            for l in data.splitlines(keepends=True):
                n += 1
                lines.append(json.dumps({"host": host, "source": name[:-4], "file": rel, "line": n, "offset": pos, "text": l}))
                pos += len(l.encode())
    body = "\n".join(lines) + "\n"
body_path = os.path.join(tmp, "body.ndjson")
open(body_path, "w").write(body)
lua = os.path.join(tmp, "post.lua")
open(lua, "w").write(f'''
local f = io.open("{body_path}", "rb")
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/x-ndjson"
''')

# Warm-up: the first attributions fault in code and arenas.
for _ in range(20):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("POST", "/v1/attributions", body=body.encode(), headers={"Content-Type": "application/x-ndjson"})
    r = c.getresponse()
    r.read()
    c.close()
    if r.status != 200:
        fail(f"warm-up attribution answered {r.status}")
rss_before = rss_mb()

stop = threading.Event()
slow_connected = []


def slow_client():
    while not stop.is_set():
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.sendall(b"POST /v1/attributions HTTP/1.1\r\nHost: localhost\r\n")
            i = 0
            slow_connected.append(1)
            try:
                while not stop.is_set():
                    # Readable means the service answered (408) or closed: connect again at once.
                    r, _, _ = select.select([s], [], [], 5)
                    if r:
                        break
                    s.sendall(f"X-Slow-{i}: y\r\n".encode())
                    i += 1
            finally:
                slow_connected.pop()
                s.close()
        except OSError:
            stop.wait(0.2)  # cut by the header deadline: connect again


slow_threads = [threading.Thread(target=slow_client, daemon=True) for _ in range(args.slow)]
for t in slow_threads:
    t.start()
time.sleep(1)

probes = []


def prober():
    while not stop.is_set():
        t0 = time.time()
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/healthz")
            r = c.getresponse()
            r.read()
            c.close()
            probes.append(((time.time() - t0) * 1000, r.status, len(slow_connected)))
        except Exception as e:
            probes.append((10000.0, repr(e), len(slow_connected)))
        stop.wait(0.1)


pt = threading.Thread(target=prober)
pt.start()
wrk = subprocess.run(["wrk", "-t", "2", "-c", str(args.connections), "-d", f"{args.duration}s", "--latency", "--timeout", "30s",
                      "-s", lua, f"http://127.0.0.1:{port}/v1/attributions"], capture_output=True, text=True)
stop.set()
pt.join()
rss_after = rss_mb()
out = wrk.stdout
print(out)

requests = int(re.search(r"(\d+) requests in", out).group(1)) if re.search(r"(\d+) requests in", out) else 0
non2xx = int(re.search(r"Non-2xx or 3xx responses: (\d+)", out).group(1)) if "Non-2xx" in out else 0
sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
socket_errors = sum(int(x) for x in sock.groups()) if sock else 0
p = {m.group(1): m.group(2) for m in re.finditer(r"\s+(50|75|90|99)%\s+(\S+)", out)}
lat = sorted(x[0] for x in probes)
bad_probes = [x for x in probes if x[1] != 200 or x[0] >= 100]
slow_min = min((x[2] for x in probes), default=0)
print(f"requests {requests}, errors {non2xx + socket_errors} (non-2xx {non2xx}, socket {socket_errors}), "
      f"p50 {p.get('50')}, p99 {p.get('99')}")
print(f"RSS before {rss_before:.0f} MB, after {rss_after:.0f} MB")
if lat:
    print(f"/healthz: {len(lat)} probes, p50 {lat[len(lat) // 2]:.1f} ms, p99 {lat[int(len(lat) * 0.99)]:.1f} ms, "
          f"max {lat[-1]:.1f} ms; slow clients connected at each probe >= {slow_min} of {args.slow}")

srv.send_signal(signal.SIGTERM)
rc = srv.wait(60)
# Both phases run and print their figures; failures are reported at the end.
failures = []
if requests == 0:
    failures.append("wrk made no request")
if non2xx + socket_errors:
    failures.append(f"{non2xx + socket_errors} errors under load")
if bad_probes:
    failures.append(f"{len(bad_probes)} /healthz probes failed or took >= 100 ms: {bad_probes[:5]}")
if rss_after - rss_before > 64:
    failures.append(f"RSS grew from {rss_before:.0f} MB to {rss_after:.0f} MB")
if rc != 0:
    failures.append(f"culprit serve exited {rc} after SIGTERM")
srv = None

# ---------------------------------------------------------------- overload
if args.overload_seconds > 0:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    budget_mb = int(args.budget[:-1]) * units[args.budget[-1].upper()] / (1 << 20) if args.budget[-1].isalpha() \
        else int(args.budget) / (1 << 20)
    srv, port = start("overload", "--threads", "4", "--max-total-bytes", args.budget, "--max-body", "64M")
    rss_idle = rss_mb()
    big = [json.dumps({"workload_id": "overload", "nodes": ["node-01", "node-02"]})]
    for i in range(80000):
        big.append(json.dumps({"host": "node-0%d" % (i % 2 + 1), "source": "app",
                               "text": f"[2026-03-14 02:{i // 3600 % 60:02d}:{i % 60:02d}] rank {i % 64} step {i} loss 1.{i % 97:02d} ok"}))
    big_body = ("\n".join(big) + "\n").encode()
    results = []  # (status, seconds)
    peak = [rss_idle]
    done = threading.Event()

    def sampler():
        while not done.is_set():
            peak[0] = max(peak[0], rss_mb())
            done.wait(0.02)

    def client():
        t_end = time.time() + args.overload_seconds
        while time.time() < t_end:
            t0 = time.time()
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                c.request("POST", "/v1/attributions", body=big_body, headers={"Content-Type": "application/x-ndjson"})
                r = c.getresponse()
                r.read()
                c.close()
                results.append((r.status, time.time() - t0))
                if r.status == 429:
                    time.sleep(0.1)  # as a client honouring the refusal would
            except Exception as e:
                results.append((repr(e), time.time() - t0))

    st = threading.Thread(target=sampler)
    st.start()
    clients = [threading.Thread(target=client) for _ in range(args.overload_clients)]
    for t in clients:
        t.start()
    for t in clients:
        t.join()
    done.set()
    st.join()
    peak_hwm = rss_mb("VmHWM")
    ok = sorted(t for s_, t in results if s_ == 200)
    refused = sorted(t for s_, t in results if s_ == 429)
    other = [s_ for s_, _ in results if s_ not in (200, 429)]

    def pct(xs, q):
        return f"{xs[min(len(xs) - 1, int(len(xs) * q))]:.2f} s" if xs else "-"

    print(f"overload: {args.overload_clients} clients x {len(big_body) / 1e6:.1f} MB NDJSON for {args.overload_seconds} s, "
          f"--max-total-bytes {args.budget}: {len(ok)} admitted (p50 {pct(ok, 0.5)}, p99 {pct(ok, 0.99)}), "
          f"{len(refused)} refused with 429 (p50 {pct(refused, 0.5)}), {len(other)} other")
    print(f"overload: RSS idle {rss_idle:.0f} MB, peak {max(peak[0], peak_hwm):.0f} MB (sampled {peak[0]:.0f}, "
          f"high-water mark {peak_hwm:.0f}); bound idle + budget + 64 = {rss_idle + budget_mb + 64:.0f} MB")
    srv.send_signal(signal.SIGTERM)
    rc = srv.wait(60)
    if other:
        failures.append(f"overload: {len(other)} answers neither 200 nor 429: {other[:5]}")
    if not ok or not refused:
        failures.append("overload: expected both admitted and refused requests")
    if max(peak[0], peak_hwm) > rss_idle + budget_mb + 64:
        failures.append(f"overload: peak RSS {max(peak[0], peak_hwm):.0f} MB exceeds idle + budget + 64 MB")
    if rc != 0:
        failures.append(f"culprit serve exited {rc} after SIGTERM")
    srv = None
for f in failures:
    print(f"FAIL: {f}", file=sys.stderr)
if failures:
    sys.exit(1)
print("PASS")
