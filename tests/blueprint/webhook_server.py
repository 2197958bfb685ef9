#!/usr/bin/env python3
"""A webhook receiver for the recovery hand-off tests: records every request.

usage: webhook_server.py PORT_FILE LOG_FILE [MODE]

Binds 127.0.0.1 on a free port, writes the port to PORT_FILE, and appends
one JSON line per request to LOG_FILE: {"method", "path", "content_type",
"body"} (the body parsed as JSON when it is). MODE:
  ok     answer 200 to everything (the default)
  flaky  answer 503 to the first delivery of each document, 200 to the retry
  fail   answer 500 to everything
Runs until SIGTERM.
"""
import http.server
import json
import signal
import sys
import threading

port_file, log_file = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else "ok"
seen = set()
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n).decode("utf-8", "replace")
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw
        with lock:
            with open(log_file, "a") as f:
                f.write(json.dumps({"method": "POST", "path": self.path,
                                    "content_type": self.headers.get("Content-Type", ""), "body": body}) + "\n")
            first = raw not in seen
            seen.add(raw)
        status = 200
        if mode == "fail" or (mode == "flaky" and first):
            status = 503 if mode == "flaky" else 500
        payload = b'{"ok": true}' if status == 200 else b'{"error": "try again"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(port_file + ".tmp", port_file)
signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
server.serve_forever()
