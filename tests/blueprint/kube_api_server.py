#!/usr/bin/env python3
"""A Kubernetes API server for the blueprint's tests: the part of the API that
Kueue discovery, the pod-log collector and kubectl use, over state loaded from
a JSON fixture. Only what cannot run here (no kube-apiserver in Debian) is
served by this program, and it answers as the real server does:

* discovery: /version, /api, /apis (APIGroupList with kueue.x-k8s.io/v1beta1,
  apps/v1 and batch/v1), /api/v1, /apis/<group>/<version> (APIResourceList);
* GET of one object; LIST with labelSelector (=, ==, !=, in, notin, exists,
  !exists), fieldSelector (=, ==, != on the fields the API server supports for
  the kind), limit / continue paging, metadata.resourceVersion on lists and
  objects, remainingItemCount, and 410 Gone ("Expired") for a continue token
  the server no longer serves;
* `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` answers a
  meta.k8s.io/v1 Table (the server-side printing kubectl asks for), with the
  columns the API server prints for pods and events and a CRD's
  additionalPrinterColumns for Workloads;
* DELETE of a pod (it is gone afterwards: its logs too);
* POST (create, as `kubectl apply` does for a new object) of Namespaces,
  Secrets (stringData stored as base64 data), ConfigMaps, Services and
  apps/v1 Deployments, 409 AlreadyExists for an existing one;
* /api/v1/namespaces/NS/pods/NAME/log with container, previous, timestamps,
  sinceTime, sinceSeconds, tailLines, limitBytes, streamed with chunked
  transfer encoding as text/plain, and the API's errors for a missing
  container name, an unknown container or no previous instance;
* errors as a v1 Status object (kind, apiVersion, metadata, status Failure,
  message, reason, details, code), 401 without a valid token or client
  certificate, 404 for unknown paths and objects, 405 for other verbs.

TLS: --tls-cert/--tls-key serve HTTPS; --client-ca requires a client
certificate signed by that CA; --token requires "Authorization: Bearer TOKEN"
(either one is enough when both are given, as with the real server).

Fixture (JSON): {"objects": [<Kubernetes objects with apiVersion and kind>],
"logs": {"NS/POD/CONTAINER": [["<RFC 3339 time>", "<line>"], ...],
"NS/POD/CONTAINER#previous": [...]}}. The port is written to --port-file once
listening. Test-only knobs: --expire-continue N answers 410 to the N-th request
that carries a continue token (once).
"""

import argparse
import base64
import datetime
import json
import re
import ssl
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

GROUPS = {
    # group -> (version, {plural: (kind, namespaced, shortNames, verbs, singular)})
    "": ("v1", {
        "pods": ("Pod", True, ["po"], ["delete", "get", "list"], "pod"),
        "pods/log": ("Pod", True, [], ["get"], ""),
        "events": ("Event", True, ["ev"], ["get", "list"], "event"),
        "nodes": ("Node", False, ["no"], ["get", "list"], "node"),
        "namespaces": ("Namespace", False, ["ns"], ["create", "get", "list"], "namespace"),
        "secrets": ("Secret", True, [], ["create", "get", "list"], "secret"),
        "configmaps": ("ConfigMap", True, ["cm"], ["create", "get", "list"], "configmap"),
        "services": ("Service", True, ["svc"], ["create", "get", "list"], "service"),
    }),
    "apps": ("v1", {
        "deployments": ("Deployment", True, ["deploy"], ["create", "get", "list"], "deployment"),
    }),
    "batch": ("v1", {
        "jobs": ("Job", True, [], ["get", "list"], "job"),
    }),
    "kueue.x-k8s.io": ("v1beta1", {
        "workloads": ("Workload", True, ["wl"], ["get", "list"], "workload"),
        "workloads/status": ("Workload", True, [], ["get"], ""),
    }),
}
KIND_TO = {}
for g, (v, res) in GROUPS.items():
    for plural, (kind, namespaced, _s, _v, _sg) in res.items():
        if "/" not in plural:
            KIND_TO[kind] = (g, v, plural, namespaced)

# Fields the API server accepts in fieldSelector, per kind (others: 400).
FIELD_SELECTABLE = {
    "Event": ["involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
              "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
              "reportingComponent", "source", "type", "metadata.name", "metadata.namespace"],
    "Pod": ["metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
            "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"],
}
DEFAULT_FIELDS = ["metadata.name", "metadata.namespace"]


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(s):
    s = s.strip()
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    m = re.match(r"^(.*T\d\d:\d\d:\d\d)(\.\d+)?([+-]\d\d:\d\d)$", s)
    if not m:
        raise ValueError(s)
    frac = m.group(2) or ""
    base = datetime.datetime.fromisoformat(m.group(1) + m.group(3))
    ns = int((frac[1:] + "000000000")[:9]) if frac else 0
    return int(base.timestamp()) * 1_000_000_000 + ns


def rfc3339_nano(ns):
    # Go's time.RFC3339Nano: trailing zeros of the fraction trimmed.
    secs, frac = divmod(ns, 1_000_000_000)
    t = datetime.datetime.fromtimestamp(secs, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        t += "." + ("%09d" % frac).rstrip("0")
    return t + "Z"


def age(ts):
    if not ts:
        return "<unknown>"
    secs = max(0, (datetime.datetime.now(datetime.timezone.utc).timestamp() * 1e9 - parse_time(ts)) / 1e9)
    if secs < 120:
        return "%ds" % secs
    if secs < 7200:
        return "%dm" % (secs // 60)
    if secs < 172800:
        return "%dh" % (secs // 3600)
    return "%dd" % (secs // 86400)


def get_path(obj, dotted):
    cur = obj
    for part in dotted.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part, "")
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return "" if cur is None else str(cur)


class State:
    def __init__(self, fixture):
        self.lock = threading.Lock()
        self.rv = 1000
        self.objects = {}  # (kind, ns, name) -> object
        for o in fixture.get("objects", []):
            self.put(o)
        self.logs = fixture.get("logs", {})
        self.continue_requests = 0

    def next_rv(self):
        self.rv += 1
        return str(self.rv)

    def put(self, o):
        md = o.setdefault("metadata", {})
        md.setdefault("uid", str(uuid.uuid4()))
        md.setdefault("creationTimestamp", now_rfc3339())
        md["resourceVersion"] = self.next_rv()
        kind = o["kind"]
        ns = md.get("namespace", "") if KIND_TO[kind][3] else ""
        if KIND_TO[kind][3] and not ns:
            md["namespace"] = ns = "default"
        self.objects[(kind, ns, md["name"])] = o


def status(code, reason, message, details=None):
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}
    if details:
        body["details"] = details
    return body


def parse_label_selector(sel):
    reqs = []
    if not sel:
        return reqs
    # split on commas outside parentheses
    parts, depth, cur = [], 0, ""
    for ch in sel:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for p in parts:
        p = p.strip()
        m = re.match(r"^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$", p)
        if m:
            reqs.append((m.group(1), m.group(2), [v.strip() for v in m.group(3).split(",") if v.strip()]))
            continue
        m = re.match(r"^([\w./-]+)\s*(==|!=|=)\s*([\w./-]*)$", p)
        if m:
            reqs.append((m.group(1), m.group(2), [m.group(3)]))
            continue
        m = re.match(r"^(!?)([\w./-]+)$", p)
        if m:
            reqs.append((m.group(2), "!exists" if m.group(1) else "exists", []))
            continue
        raise ValueError("unable to parse requirement: " + p)
    return reqs


def labels_match(labels, reqs):
    for key, op, vals in reqs:
        has = key in labels
        v = labels.get(key)
        if op in ("=", "==") and v != vals[0]:
            return False
        if op == "!=" and v == vals[0]:
            return False
        if op == "in" and v not in vals:
            return False
        if op == "notin" and has and v in vals:
            return False
        if op == "exists" and not has:
            return False
        if op == "!exists" and has:
            return False
    return True


def parse_field_selector(sel, kind):
    reqs = []
    if not sel:
        return reqs
    allowed = FIELD_SELECTABLE.get(kind, DEFAULT_FIELDS)
    for p in sel.split(","):
        m = re.match(r"^([\w.]+)\s*(==|!=|=)\s*(.*)$", p.strip())
        if not m:
            raise ValueError('invalid selector: \'%s\'; can\'t understand \'%s\'' % (sel, p))
        if m.group(1) not in allowed:
            raise KeyError('field label not supported: %s' % m.group(1))
        reqs.append((m.group(1), m.group(2), m.group(3)))
    return reqs


def fields_match(obj, reqs):
    for f, op, v in reqs:
        got = get_path(obj, f)
        if op in ("=", "==") and got != v:
            return False
        if op == "!=" and got == v:
            return False
    return True


def pod_table_row(p):
    st = p.get("status", {})
    spec = p.get("spec", {})
    cs = st.get("containerStatuses", [])
    ready = sum(1 for c in cs if c.get("ready"))
    restarts = sum(c.get("restartCount", 0) for c in cs)
    reason = st.get("reason") or st.get("phase", "")
    for c in cs:
        s = c.get("state", {})
        if "waiting" in s and s["waiting"].get("reason"):
            reason = s["waiting"]["reason"]
        elif "terminated" in s:
            reason = s["terminated"].get("reason") or ("Signal:%d" % s["terminated"]["signal"] if s["terminated"].get("signal") else "ExitCode:%d" % s["terminated"].get("exitCode", 0))
    if p["metadata"].get("deletionTimestamp"):
        reason = "Terminating"
    return [p["metadata"]["name"], "%d/%d" % (ready, len(spec.get("containers", []))), reason, restarts,
            age(p["metadata"].get("creationTimestamp")), st.get("podIP", "<none>") or "<none>",
            spec.get("nodeName", "<none>") or "<none>", st.get("nominatedNodeName", "<none>") or "<none>", "<none>"]


def condition_status(o, t):
    for c in o.get("status", {}).get("conditions", []):
        if c.get("type") == t:
            return c.get("status", "")
    return None


def table(kind, items):
    if kind == "Pod":
        cols = [("Name", "string", "name", 0), ("Ready", "string", "", 0), ("Status", "string", "", 0),
                ("Restarts", "string", "", 0), ("Age", "string", "", 0), ("IP", "string", "", 1),
                ("Node", "string", "", 1), ("Nominated Node", "string", "", 1), ("Readiness Gates", "string", "", 1)]
        rows = [pod_table_row(p) for p in items]
    elif kind == "Workload":
        # The CRD's additionalPrinterColumns (kueue apis/kueue/v1beta1/workload_types.go).
        cols = [("Name", "string", "name", 0), ("Queue", "string", "", 0), ("Reserved in", "string", "", 0),
                ("Admitted", "string", "", 0), ("Finished", "string", "", 0), ("Age", "date", "", 0)]
        rows = [[w["metadata"]["name"], w.get("spec", {}).get("queueName"),
                 w.get("status", {}).get("admission", {}).get("clusterQueue"), condition_status(w, "Admitted"),
                 condition_status(w, "Finished"), w["metadata"].get("creationTimestamp")] for w in items]
    elif kind == "Event":
        cols = [("Last Seen", "string", "", 0), ("Type", "string", "", 0), ("Reason", "string", "", 0),
                ("Object", "string", "", 0), ("Message", "string", "", 0)]
        rows = [[age(e.get("lastTimestamp") or e.get("eventTime")), e.get("type", ""), e.get("reason", ""),
                 "%s/%s" % (e.get("involvedObject", {}).get("kind", "").lower(), e.get("involvedObject", {}).get("name", "")),
                 e.get("message", "")] for e in items]
    else:
        cols = [("Name", "string", "name", 0), ("Age", "string", "", 0)]
        rows = [[o["metadata"]["name"], age(o["metadata"].get("creationTimestamp"))] for o in items]
    return {
        "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {},
        "columnDefinitions": [{"name": n, "type": t, "format": f, "description": n, "priority": pr} for n, t, f, pr in cols],
        "rows": [{"cells": r, "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                          "metadata": o["metadata"]}} for r, o in zip(rows, items)],
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kube-api-test"

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("kube-api: " + (fmt % args) + "\n")

    # --- plumbing
    def send_json(self, code, body, extra_headers=None):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-cache, private")
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_status(self, code, reason, message, details=None):
        self.send_json(code, status(code, reason, message, details))

    def authorized(self):
        srv = self.server
        if not srv.token and not srv.client_ca:
            return True
        if srv.client_ca:
            try:
                if self.connection.getpeercert():
                    return True
            except (AttributeError, ValueError):
                pass
        if srv.token and self.headers.get("Authorization", "") == "Bearer " + srv.token:
            return True
        return False

    def do_GET(self):
        self.route("GET")

    def do_DELETE(self):
        self.route("DELETE")

    def do_POST(self):
        self.route("POST")

    def do_PUT(self):
        self.route("PUT")

    def do_PATCH(self):
        self.route("PATCH")

    def route(self, verb):
        length = int(self.headers.get("Content-Length") or 0)
        self.body = self.rfile.read(length) if length else b""
        if not self.authorized():
            self.send_status(401, "Unauthorized", "Unauthorized")
            return
        url = urlsplit(self.path)
        q = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        parts = [unquote(p) for p in url.path.strip("/").split("/") if p]
        try:
            self.dispatch(verb, parts, q)
        except BrokenPipeError:
            pass

    def dispatch(self, verb, parts, q):
        st = self.server.state
        if parts == ["version"]:
            self.send_json(200, {"major": "1", "minor": "30", "gitVersion": "v1.30.4", "gitCommit": "test",
                                 "gitTreeState": "clean", "buildDate": "2024-08-14T19:00:00Z", "goVersion": "go1.22.5",
                                 "compiler": "gc", "platform": "linux/amd64"})
            return
        if parts == ["api"]:
            self.send_json(200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:%d" % self.server.server_address[1]}]})
            return
        if parts == ["apis"]:
            groups = []
            for g, (v, _r) in sorted(GROUPS.items()):
                if g:
                    gv = {"groupVersion": "%s/%s" % (g, v), "version": v}
                    groups.append({"name": g, "versions": [gv], "preferredVersion": gv})
            self.send_json(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
            return
        # /api/v1/... or /apis/GROUP/VERSION/...
        if len(parts) >= 2 and parts[0] == "api" and parts[1] == "v1":
            group, version, rest = "", "v1", parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis" and parts[1] in GROUPS and GROUPS[parts[1]][0] == parts[2]:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            self.send_status(404, "NotFound", "the server could not find the requested resource")
            return
        resources = GROUPS[group][1]
        if not rest:
            self.send_json(200, {"kind": "APIResourceList", "apiVersion": "v1",
                                 "groupVersion": ("%s/%s" % (group, version)) if group else version,
                                 "resources": [{"name": n, "singularName": sg, "namespaced": ns, "kind": k,
                                                "verbs": verbs, **({"shortNames": sn} if sn else {})}
                                               for n, (k, ns, sn, verbs, sg) in sorted(resources.items())]})
            return
        ns = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            ns, rest = rest[1], rest[2:]
        plural = rest[0]
        if plural not in resources or "/" in plural:
            self.send_status(404, "NotFound", "the server could not find the requested resource")
            return
        kind, namespaced, _sn, verbs, _sg = resources[plural]
        name = rest[1] if len(rest) >= 2 else None
        sub = rest[2] if len(rest) >= 3 else None
        if len(rest) > 3 or (sub and "%s/%s" % (plural, sub) not in resources):
            self.send_status(404, "NotFound", "the server could not find the requested resource")
            return
        if sub == "log":
            self.pod_log(ns or "default", name, q)
            return
        if name is None:
            if verb == "POST" and "create" in verbs:
                self.create(kind, namespaced, ns, plural, group, q)
                return
            if verb != "GET":
                self.send_status(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
                return
            self.list(kind, namespaced, ns, q)
            return
        key = (kind, ns or "" if namespaced else "", name)
        if namespaced and ns is None:
            self.send_status(404, "NotFound", "the server could not find the requested resource")
            return
        with st.lock:
            obj = st.objects.get((kind, ns if namespaced else "", name))
            if verb == "DELETE" and obj is not None and kind == "Pod":
                del st.objects[(kind, ns, name)]
                st.next_rv()
                for k in [k for k in st.logs if k.startswith("%s/%s/" % (ns, name))]:
                    del st.logs[k]
        if obj is None:
            self.send_status(404, "NotFound", '%s "%s" not found' % (plural, name),
                             {"name": name, "kind": plural, **({"group": group} if group else {})})
            return
        if verb == "GET":
            self.send_json(200, obj)
        elif verb == "DELETE" and kind == "Pod":
            self.send_json(200, obj)
        else:
            self.send_status(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        _ = key

    def create(self, kind, namespaced, ns, plural, group, q):
        """POST to a collection (kubectl create / apply): the object as
        sent, with the fields the API server sets (uid, resourceVersion,
        creationTimestamp, a Secret's stringData moved into base64 data),
        201; 409 AlreadyExists; 400 for a body that is not such an object.
        ?dryRun=All answers the same without storing it."""
        st = self.server.state
        try:
            obj = json.loads(self.body or b"null")
        except ValueError as e:
            self.send_status(400, "BadRequest", "the body is not JSON: %s" % e)
            return
        g, v, _p, _n = KIND_TO[kind]
        want_api = ("%s/%s" % (g, v)) if g else v
        if not isinstance(obj, dict) or obj.get("kind") != kind or obj.get("apiVersion") != want_api:
            self.send_status(400, "BadRequest", "the object is not a %s %s" % (want_api, kind))
            return
        md = obj.setdefault("metadata", {})
        if not md.get("name"):
            self.send_status(422, "Invalid", "%s is invalid: metadata.name: Required value: name is required" % kind)
            return
        if namespaced:
            if md.get("namespace", ns) != ns:
                self.send_status(400, "BadRequest", "the namespace of the provided object does not match the namespace "
                                                    "sent on the request")
                return
            md["namespace"] = ns
        if kind == "Secret" and "stringData" in obj:
            data = obj.setdefault("data", {})
            for k, val in obj.pop("stringData").items():
                data[k] = base64.b64encode(val.encode()).decode()
        with st.lock:
            if (kind, ns if namespaced else "", md["name"]) in st.objects:
                self.send_status(409, "AlreadyExists", '%s "%s" already exists' % (plural, md["name"]),
                                 {"name": md["name"], "kind": plural, **({"group": group} if group else {})})
                return
            if q.get("dryRun") != "All":
                st.put(obj)
        self.send_json(201, obj)

    def list(self, kind, namespaced, ns, q):
        st = self.server.state
        try:
            lreqs = parse_label_selector(q.get("labelSelector", ""))
            freqs = parse_field_selector(q.get("fieldSelector", ""), kind)
        except (ValueError, KeyError) as e:
            self.send_status(400, "BadRequest", str(e.args[0]))
            return
        limit = int(q.get("limit") or 0)
        cont = q.get("continue", "")
        with st.lock:
            start = 0
            list_rv = str(st.rv)
            if cont:
                st.continue_requests += 1
                try:
                    tok = json.loads(base64.b64decode(cont))
                    start, list_rv = int(tok["start"]), tok["rv"]
                except Exception:
                    self.send_status(400, "BadRequest", "continue key is not valid: illegal base64 data at input byte 0")
                    return
                if self.server.expire_continue and st.continue_requests == self.server.expire_continue:
                    tok = base64.b64encode(json.dumps({"rv": str(st.rv), "start": start}).encode()).decode()
                    body = status(410, "Expired", "The provided continue parameter is too old to display a consistent "
                                  "list result. You can start a new list without the continue parameter, or use the "
                                  "continue token in this response to retrieve the remainder of the results. Continuing "
                                  "with the provided token results in an inconsistent list - objects that were created, "
                                  "modified, or deleted between the time the first chunk was returned and now may show "
                                  "up in the list.")
                    body["metadata"] = {"continue": tok}
                    self.send_json(410, body)
                    return
            items = [o for (k, n, _), o in sorted(st.objects.items()) if k == kind and (ns is None or n == ns)
                     and labels_match(o["metadata"].get("labels", {}), lreqs) and fields_match(o, freqs)]
        page = items[start:start + limit] if limit else items[start:]
        meta = {"resourceVersion": list_rv}
        rest = len(items) - start - len(page)
        if limit and rest > 0:
            meta["continue"] = base64.b64encode(json.dumps({"rv": list_rv, "start": start + len(page)}).encode()).decode()
            meta["remainingItemCount"] = rest
        accept = self.headers.get("Accept", "")
        if "as=Table" in accept:
            t = table(kind, page)
            t["metadata"] = meta
            self.send_json(200, t)
            return
        g, v, _p, _n = KIND_TO[kind]
        self.send_json(200, {"kind": kind + "List", "apiVersion": ("%s/%s" % (g, v)) if g else v, "metadata": meta,
                             "items": page})

    def pod_log(self, ns, name, q):
        st = self.server.state
        with st.lock:
            pod = st.objects.get(("Pod", ns, name))
        if pod is None:
            self.send_status(404, "NotFound", 'pods "%s" not found' % name, {"name": name, "kind": "pods"})
            return
        containers = [c["name"] for c in pod.get("spec", {}).get("initContainers", [])] + \
                     [c["name"] for c in pod.get("spec", {}).get("containers", [])]
        container = q.get("container", "")
        if not container:
            regular = [c["name"] for c in pod.get("spec", {}).get("containers", [])]
            if len(regular) == 1:
                container = regular[0]
            else:
                self.send_status(400, "BadRequest", "a container name must be specified for pod %s, choose one of: [%s]"
                                 % (name, " ".join(regular)))
                return
        if container not in containers:
            self.send_status(400, "BadRequest", "container %s is not valid for pod %s" % (container, name))
            return
        previous = q.get("previous", "false") == "true"
        key = "%s/%s/%s%s" % (ns, name, container, "#previous" if previous else "")
        with st.lock:
            lines = list(st.logs.get(key, [])) if key in st.logs else None
        if lines is None:
            if previous:
                self.send_status(400, "BadRequest", 'previous terminated container "%s" in pod "%s" not found' % (container, name))
            else:
                self.send_status(400, "BadRequest", 'container "%s" in pod "%s" is waiting to start: ContainerCreating'
                                 % (container, name))
            return
        since = None
        if q.get("sinceTime"):
            try:
                since = parse_time(q["sinceTime"])
            except ValueError:
                self.send_status(400, "BadRequest", 'parsing time "%s" as "2006-01-02T15:04:05Z07:00": cannot parse'
                                 % q["sinceTime"])
                return
        elif q.get("sinceSeconds"):
            since = int(datetime.datetime.now(datetime.timezone.utc).timestamp() - int(q["sinceSeconds"])) * 10**9
        out = []
        for ts, text in lines:
            t = parse_time(ts)
            if since is not None and t < since:
                continue
            out.append(((rfc3339_nano(t) + " ") if q.get("timestamps") == "true" else "") + text + "\n")
        if q.get("tailLines"):
            out = out[-int(q["tailLines"]):] if int(q["tailLines"]) > 0 else []
        data = "".join(out).encode()
        if q.get("limitBytes"):
            data = data[:int(q["limitBytes"])]
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.server.log_requests += 1
        step = 4096
        for i in range(0, len(data), step):
            chunk = data[i:i + step]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixture", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--client-ca")
    ap.add_argument("--token")
    ap.add_argument("--expire-continue", type=int, default=0)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    with open(a.fixture) as f:
        fixture = json.load(f)
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.state = State(fixture)
    srv.token = a.token
    srv.client_ca = a.client_ca
    srv.expire_continue = a.expire_continue
    srv.verbose = a.verbose
    srv.log_requests = 0
    if a.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        if a.client_ca:
            ctx.load_verify_locations(a.client_ca)
            ctx.verify_mode = ssl.CERT_OPTIONAL
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write(str(srv.server_address[1]))
        import os
        os.replace(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
