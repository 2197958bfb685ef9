#!/usr/bin/env bash
# Kueue discovery and the Kubernetes pod-log collector against
# tests/blueprint/kube_api_server.py (no kube-apiserver can run here), proven
# wire-compatible by driving the same server with the installed kubectl
# (get workloads, get pods -o json, logs --timestamps --previous), then
# `culprit run` through a kubeconfig with a bearer token:
#   - the failed Workload's 3 pods and nodes are discovered, the restarted
#     container's previous log is read, and the CUDA OOM on gpu-node-03 is the
#     root cause (as for the examples/cuda-oom-one-rank bundle);
#   - the preempted Workload whose pod is gone gets its node from Events and
#     a pod-log report that says its log is missing;
#   - --record-placement stores a running Workload's pod placement;
#   - a wrong token is refused (401) and the run says so.
#
#   check_kube.sh CULPRIT SOURCE_DIR
set -euo pipefail
CULPRIT=$(readlink -f "$1")
ROOT=$(readlink -f "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d /tmp/culprit-kube.XXXXXX)
KPID=""
cleanup() {
  if [ -n "$KPID" ]; then kill "$KPID" 2>/dev/null || true; wait "$KPID" 2>/dev/null || true; fi
  [ -n "${KEEP:-}" ] || rm -rf "$D"
}
trap cleanup EXIT
fail() { echo "check_kube: FAIL: $*"; [ -f "$D/kube.err" ] && tail -5 "$D/kube.err"; exit 1; }
command -v kubectl >/dev/null || fail "kubectl is needed (scripts/install-deps.sh installs kubernetes-client when none is on PATH)"

python3 "$HERE/make_kube_fixture.py" "$ROOT/examples/cuda-oom-one-rank" "$D/fixture.json"
TOKEN="kube-t0ken-$$"
echo "$TOKEN" > "$D/token"
# HTTPS with a test CA (kubectl sends a bearer token only over TLS), the
# server certificate for 127.0.0.1.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=culprit-test-ca" -keyout "$D/ca.key" -out "$D/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout "$D/server.key" -out "$D/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > "$D/ext.cnf"
openssl x509 -req -in "$D/server.csr" -CA "$D/ca.crt" -CAkey "$D/ca.key" -CAcreateserial -days 2 -extfile "$D/ext.cnf" -out "$D/server.crt" 2>/dev/null
python3 "$HERE/kube_api_server.py" --fixture "$D/fixture.json" --port-file "$D/port" --token "$TOKEN" \
  --tls-cert "$D/server.crt" --tls-key "$D/server.key" 2> "$D/kube.err" &
KPID=$!
for _ in $(seq 1 100); do [ -s "$D/port" ] && break; sleep 0.1; done
[ -s "$D/port" ] || fail "the Kubernetes test server did not start"
SERVER=https://127.0.0.1:$(cat "$D/port")
kubeconfig() {  # kubeconfig FILE TOKEN
  cat > "$1" <<CONF
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: $SERVER
    certificate-authority: $D/ca.crt
contexts:
- name: test
  context:
    cluster: test
    user: trainer
    namespace: train
current-context: test
users:
- name: trainer
  user:
    token: $2
CONF
}
kubeconfig "$D/kubeconfig" "$TOKEN"
export KUBECONFIG=$D/kubeconfig
K() { kubectl --cache-dir "$D/kcache" "$@"; }

# --- kubectl against the test server
K get workloads.kueue.x-k8s.io -n train > "$D/wl.txt" || fail "kubectl get workloads"
grep -q "job-llm-train-7c9d2" "$D/wl.txt" && grep -q "job-bench-5d7f1" "$D/wl.txt" || { cat "$D/wl.txt"; fail "kubectl get workloads lists"; }
[ "$(K get wl job-llm-train-7c9d2 -n train -o jsonpath='{.status.conditions[?(@.type=="Finished")].reason}')" = Failed ] || fail "kubectl get wl -o jsonpath"
K get pods -n train -o json > "$D/pods.json" || fail "kubectl get pods -o json"
python3 -c "
import json, sys
p = json.load(open(sys.argv[1]))
assert p['kind'] == 'List' or p['kind'] == 'PodList', p['kind']
assert sorted(x['spec']['nodeName'] for x in p['items']) == ['gpu-node-01', 'gpu-node-02', 'gpu-node-03', 'gpu-node-05'], [x['metadata']['name'] for x in p['items']]
" "$D/pods.json" || fail "kubectl get pods -o json content"
[ "$(K get pods -n train -l batch.kubernetes.io/job-name=llm-train -o name | grep -c "^pod/")" = 3 ] || fail "kubectl get pods -l"
K logs --timestamps --previous -n train llm-train-2-h3v8s -c trainer > "$D/prev.log" || fail "kubectl logs --previous"
grep -q "^20[0-9-]*T[0-9:.]*Z \[rank21\]: torch.OutOfMemoryError: CUDA out of memory" "$D/prev.log" || fail "kubectl logs --timestamps --previous content"
K logs -n train llm-train-0-x7k2p --tail 1 > /dev/null || fail "kubectl logs --tail"
set +e; K logs -n train llm-train-0-x7k2p --previous > /dev/null 2> "$D/noprev.txt"; rc=$?; set -e
[ "$rc" != 0 ] && grep -q 'previous terminated container "trainer" in pod "llm-train-0-x7k2p" not found' "$D/noprev.txt" || fail "kubectl logs --previous of a container that never restarted: $(cat "$D/noprev.txt")"
K get events -n train --field-selector reason=Scheduled -o name > "$D/events.txt" || fail "kubectl get events --field-selector"
[ "$(grep -c '^event' "$D/events.txt")" = 4 ] || { cat "$D/events.txt"; fail "kubectl get events --field-selector reason=Scheduled: not the 4 Scheduled events"; }
echo "check_kube: kubectl $(kubectl version --client -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["clientVersion"]["gitVersion"])') drove the test server: get workloads, get pods -o json, logs --timestamps --previous, events"

# --- the deployment example of docs/blueprint.md, applied with kubectl
# --validate=false: the test server serves no OpenAPI schema for client-side validation.
K apply --validate=false -f "$ROOT/docs/deploy/kubernetes.yaml" > "$D/apply.txt" || { cat "$D/apply.txt"; fail "kubectl apply -f docs/deploy/kubernetes.yaml"; }
for made in namespace/culprit secret/culprit configmap/culprit-blueprint deployment.apps/culprit-blueprint \
            service/culprit-blueprint deployment.apps/culprit-serve service/culprit-serve; do
  grep -q "^$made created" "$D/apply.txt" || { cat "$D/apply.txt"; fail "kubectl apply did not create $made"; }
done
[ "$(K get deployment culprit-blueprint -n culprit -o jsonpath='{.spec.replicas}')" = 3 ] || fail "the applied Deployment's replicas"
[ "$(K get deployment culprit-serve -n culprit -o jsonpath='{.spec.template.spec.containers[0].readinessProbe.httpGet.path}')" = /readyz ] \
  || fail "the applied serve Deployment's readiness probe"
K get configmap culprit-blueprint -n culprit -o jsonpath='{.data.run\.yaml}' > "$D/deployed-run.yaml" || fail "kubectl get configmap"
sed -i "s#/etc/culprit-secrets/service-token#$D/token#" "$D/deployed-run.yaml"
"$CULPRIT" run --config "$D/deployed-run.yaml" --check > /dev/null || fail "the deployed run.yaml does not pass culprit run --check"
echo "check_kube: kubectl apply created the 7 objects of docs/deploy/kubernetes.yaml; its run.yaml passes --check"

# --- culprit run: Kueue discovery + pod logs and events
cat > "$D/kube.yaml" <<CONF
cluster: k8s-test
kubernetes:
  kubeconfig: $D/kubeconfig
  page_size: 2
discovery:
  kueue:
    namespaces: [train]
    lookback: 87600h
collectors:
  kubernetes:
    source: app
output:
  stdout: jsonl
CONF
grep -q "discovery.kueue (1 namespace), collectors.kubernetes (pod logs and events)" <<< "$("$CULPRIT" run --config "$D/kube.yaml" --check)" || fail "--check: $("$CULPRIT" run --config "$D/kube.yaml" --check)"
"$CULPRIT" run --config "$D/kube.yaml" --once --record-placement --store "sqlite:$D/k.db" > "$D/k.jsonl" 2> "$D/k.err" || { cat "$D/k.err"; fail "culprit run exited $?"; }
python3 - "$D/k.jsonl" "$ROOT/examples/cuda-oom-one-rank/expected-verdict.json" <<'PY' || { cat "$D/k.err"; fail "verdicts"; }
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {r["attempt"]["key"].split("@")[0]: r for r in rows}
assert set(by) == {"kueue/k8s-test/train/job-llm-train-7c9d2", "kueue/k8s-test/train/job-bench-5d7f1"}, list(by)
a = by["kueue/k8s-test/train/job-llm-train-7c9d2"]
v, ref = a["verdict"], json.load(open(sys.argv[2]))
assert a["attempt"]["nodes"] == ["gpu-node-01", "gpu-node-02", "gpu-node-03"], a["attempt"]
assert a["attempt"]["state"] == "FAILED", a["attempt"]["state"]
assert (v["status"], v["domain"], v["sub_domain"]) == (ref["status"], ref["domain"], ref["sub_domain"]), (v["status"], v["domain"], v["sub_domain"])
assert v["culprit_nodes"] == ["gpu-node-03"], v["culprit_nodes"]
reps = {r["collector"]: r for r in v["coverage"]["collectors"]}
logs = reps["kubernetes-pod-logs"]
assert logs["status"] == "ok" and logs["nodes_covered"] == ["gpu-node-01", "gpu-node-02", "gpu-node-03"], logs
assert "kubernetes-events" in reps, reps.keys()
print(f"check_kube: {a['attempt']['key']}: {v['status']} {v['sub_domain']} on {v['culprit_nodes']} "
      f"(pod logs: {logs['observations']} lines from {len(logs['nodes_covered'])} nodes; events: {reps['kubernetes-events']['observations']})")
b = by["kueue/k8s-test/train/job-bench-5d7f1"]
assert b["attempt"]["state"] == "PREEMPTED", b["attempt"]["state"]
assert b["attempt"]["nodes"] == ["gpu-node-04"], b["attempt"]
bl = [r for r in b["verdict"]["coverage"]["collectors"] if r["collector"] == "kubernetes-pod-logs"][0]
assert bl["status"] in ("failed", "empty", "partial") and bl["nodes_covered"] == [] and "gpu-node-04" not in b["verdict"]["culprit_nodes"], bl
print(f"check_kube: {b['attempt']['key']}: PREEMPTED on {b['attempt']['nodes']} (node from Events), {b['verdict']['status']}; pod logs: {bl['reason']}")
PY
python3 -c "
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute('select workload, pod, node from placements order by pod').fetchall()
assert rows == [('job-serve-9a8b7', 'serve-0-k4j7w', 'gpu-node-05')], rows
" "$D/k.db" || fail "--record-placement did not store the running workload's pod"
grep -q "kueue placement: 1 pod placed" "$D/k.err" || fail "no placement progress line: $(grep placement "$D/k.err")"
echo "check_kube: --record-placement stored serve-0-k4j7w -> gpu-node-05 (a running workload)"

# --- a second run attributes nothing again
"$CULPRIT" run --config "$D/kube.yaml" --once --store "sqlite:$D/k.db" > "$D/k2.jsonl" 2> "$D/k2.err" || fail "second run"
[ ! -s "$D/k2.jsonl" ] || fail "a second run attributed again"

# --- a refused token
kubeconfig "$D/bad-kubeconfig" "wrong"
sed "s#$D/kubeconfig#$D/bad-kubeconfig#" "$D/kube.yaml" > "$D/bad.yaml"
set +e; "$CULPRIT" run --config "$D/bad.yaml" --once --store "sqlite:$D/b.db" > /dev/null 2> "$D/b.err"; rc=$?; set -e
[ "$rc" = 3 ] && grep -q "401" "$D/b.err" || fail "a refused token: exit $rc: $(tail -2 "$D/b.err")"
echo "check_kube: a refused token: $(grep -m1 401 "$D/b.err" | cut -c1-160)"
echo "check_kube: ok"
