#!/usr/bin/env python3
"""Builds the Kubernetes test API server's fixture (kube_api_server.py) from
examples/cuda-oom-one-rank: a Kueue Workload for batch/v1 Job `llm-train` in
namespace `train` that ran 3 pods on gpu-node-01..03 and finished Failed.
Each pod's `trainer` container log is the example's app log of the matching
node, stamped as the kubelet stamps lines (RFC 3339 with nanoseconds, the time
the line's own text carries; a line without one takes the line before's).
Pod 2 restarted once: the example's log (with the CUDA OOM on rank 21) is its
*previous* instance, the current instance only logs its restart.

A second Workload, `job-bench-5d7f1` (Job `bench`), was preempted and its pod
is gone: only the Events (job-controller "Created pod: ...", the scheduler's
"Successfully assigned ...") say it ran on gpu-node-04.

  make_kube_fixture.py EXAMPLE_DIR OUT.json
"""
import datetime
import json
import re
import sys

ex, out = sys.argv[1], sys.argv[2]
ctx = json.load(open(f"{ex}/context.json"))
start, end = ctx["start"], ctx["end"]


def ns_of(rfc):
    d = datetime.datetime.fromisoformat(rfc.replace("Z", "+00:00"))
    return int(d.timestamp()) * 10**9


def rfc_nano(ns):
    s = datetime.datetime.fromtimestamp(ns // 10**9, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{s}.{ns % 10**9:09d}Z"


def stamp(line, year):
    m = re.search(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?", line[:40])
    if not m:
        m2 = re.search(r"[EWIF](\d{1,2})(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+)", line[:60])
        if not m2:
            return None
        g = (year,) + tuple(int(x) for x in m2.groups()[:5])
        frac = m2.group(6)
    else:
        g = tuple(int(x) for x in m.groups()[:6])
        frac = m.group(7) or "0"
    t = datetime.datetime(*g, tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 10**9 + int((frac + "000000000")[:9])


def pod_log(node, pod_node):
    last, vals = ns_of(start), []
    for raw in open(f"{ex}/logs/{node}/app.log", encoding="utf-8", errors="replace"):
        line = raw.rstrip("\n").replace(node, pod_node)
        t = stamp(line, int(start[:4]))
        if t is not None and t >= last:
            last = t
        vals.append([rfc_nano(last), line])
    return vals


JOB_UID = "5b1f3c2e-8d4a-4f6b-9a70-1c2d3e4f5a6b"
WL_UID = "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b"
objects, logs = [], {}
objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "train", "creationTimestamp": "2026-01-01T00:00:00Z"}})
objects.append({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "llm-train", "namespace": "train", "uid": JOB_UID, "creationTimestamp": start,
                 "labels": {"kueue.x-k8s.io/queue-name": "gpu-queue"}},
    "spec": {"parallelism": 3, "completions": 3, "completionMode": "Indexed", "backoffLimit": 0},
    "status": {"failed": 1, "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                                            "message": "Job has reached the specified backoff limit",
                                            "lastTransitionTime": end}]},
})
admitted = rfc_nano(ns_of(start) - 6 * 10**9)[:19] + "Z"
objects.append({
    "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
    "metadata": {"name": "job-llm-train-7c9d2", "namespace": "train", "uid": WL_UID, "creationTimestamp": admitted,
                 "labels": {"kueue.x-k8s.io/job-uid": JOB_UID},
                 "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "llm-train", "uid": JOB_UID,
                                      "controller": True, "blockOwnerDeletion": True}]},
    "spec": {"queueName": "gpu-queue", "priority": 0, "active": True,
             "podSets": [{"name": "main", "count": 3, "template": {"spec": {"containers": [{"name": "trainer", "image": "nvcr.io/nvidia/pytorch:24.05-py3"}]}}}]},
    "status": {
        "admission": {"clusterQueue": "gpu-cluster-queue",
                      "podSetAssignments": [{"name": "main", "count": 3, "flavors": {"nvidia.com/gpu": "h100"},
                                             "resourceUsage": {"nvidia.com/gpu": "24"}}]},
        "conditions": [
            {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "Quota reserved in ClusterQueue gpu-cluster-queue",
             "lastTransitionTime": admitted, "observedGeneration": 1},
            {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted",
             "lastTransitionTime": admitted, "observedGeneration": 1},
            {"type": "Finished", "status": "True", "reason": "Failed", "message": "Job has reached the specified backoff limit",
             "lastTransitionTime": end, "observedGeneration": 1},
        ]},
})
for i, node in enumerate(ctx["nodes"]):
    pod_node = f"gpu-node-{i + 1:02d}"
    pod = f"llm-train-{i}-{['x7k2p', 'q9m4d', 'h3v8s'][i]}"
    restarted = i == 2
    term = {"exitCode": 1, "reason": "Error", "startedAt": start, "finishedAt": end,
            "containerID": f"containerd://{i:064x}"}
    status = {"phase": "Failed", "startTime": start, "hostIP": f"10.0.0.{11 + i}", "podIP": f"10.244.{i}.7",
              "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": start}],
              "containerStatuses": [{"name": "trainer", "ready": False, "restartCount": 1 if restarted else 0, "started": False,
                                     "image": "nvcr.io/nvidia/pytorch:24.05-py3", "imageID": "", "containerID": term["containerID"],
                                     "state": {"terminated": term}}]}
    if restarted:
        status["containerStatuses"][0]["lastState"] = {"terminated": dict(term, finishedAt=rfc_nano(ns_of(end) - 60 * 10**9)[:19] + "Z")}
    objects.append({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": pod, "namespace": "train", "creationTimestamp": start,
                     "labels": {"batch.kubernetes.io/controller-uid": JOB_UID, "controller-uid": JOB_UID,
                                "batch.kubernetes.io/job-name": "llm-train", "job-name": "llm-train",
                                "batch.kubernetes.io/job-completion-index": str(i), "kueue.x-k8s.io/queue-name": "gpu-queue"},
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "llm-train", "uid": JOB_UID,
                                          "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"nodeName": pod_node, "restartPolicy": "OnFailure", "schedulerName": "default-scheduler",
                 "containers": [{"name": "trainer", "image": "nvcr.io/nvidia/pytorch:24.05-py3"}]},
        "status": status,
    })
    lines = pod_log(node, pod_node)
    if restarted:
        logs[f"train/{pod}/trainer#previous"] = lines
        logs[f"train/{pod}/trainer"] = [[rfc_nano(ns_of(end) - 50 * 10**9), "restarting: torchrun rendezvous, waiting for peers"]]
    else:
        logs[f"train/{pod}/trainer"] = lines
    objects.append({"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{pod}.17a1", "namespace": "train"},
                    "involvedObject": {"kind": "Pod", "namespace": "train", "name": pod, "apiVersion": "v1"},
                    "reason": "Scheduled", "message": f"Successfully assigned train/{pod} to {pod_node}", "type": "Normal",
                    "source": {"component": "default-scheduler"}, "firstTimestamp": start, "lastTimestamp": start, "count": 1})
    if restarted:
        bo = rfc_nano(ns_of(end) - 55 * 10**9)[:19] + "Z"
        objects.append({"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{pod}.17b2", "namespace": "train"},
                        "involvedObject": {"kind": "Pod", "namespace": "train", "name": pod, "apiVersion": "v1", "fieldPath": "spec.containers{trainer}"},
                        "reason": "BackOff", "message": "Back-off restarting failed container trainer in pod " + pod + "_train(" + WL_UID[:8] + ")",
                        "type": "Warning", "source": {"component": "kubelet", "host": pod_node}, "firstTimestamp": bo, "lastTimestamp": bo, "count": 1})

# The preempted Workload whose pod is gone.
B_JOB, B_WL = "1a2b3c4d-0000-4000-8000-00000000b001", "1a2b3c4d-0000-4000-8000-00000000b002"
b_start = rfc_nano(ns_of(start) + 600 * 10**9)[:19] + "Z"
b_end = rfc_nano(ns_of(start) + 1800 * 10**9)[:19] + "Z"
objects.append({
    "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
    "metadata": {"name": "job-bench-5d7f1", "namespace": "train", "uid": B_WL, "creationTimestamp": b_start,
                 "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "bench", "uid": B_JOB, "controller": True}]},
    "spec": {"queueName": "gpu-queue", "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "bench", "image": "bench:1"}]}}}]},
    "status": {"conditions": [
        {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": "couldn't assign flavors", "lastTransitionTime": b_end},
        {"type": "Admitted", "status": "False", "reason": "NoReservation", "message": "The workload has no reservation", "lastTransitionTime": b_end},
        {"type": "Evicted", "status": "True", "reason": "Preempted",
         "message": "Preempted to accommodate a workload (UID: " + WL_UID + ") due to prioritization in the ClusterQueue",
         "lastTransitionTime": b_end},
        {"type": "Preempted", "status": "True", "reason": "InClusterQueue",
         "message": "Preempted to accommodate a workload (UID: " + WL_UID + ") due to prioritization in the ClusterQueue",
         "lastTransitionTime": b_end}]},
})
objects.append({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "bench.18c1", "namespace": "train"},
                "involvedObject": {"kind": "Job", "namespace": "train", "name": "bench", "uid": B_JOB, "apiVersion": "batch/v1"},
                "reason": "SuccessfulCreate", "message": "Created pod: bench-0-r2d2x", "type": "Normal",
                "source": {"component": "job-controller"}, "firstTimestamp": b_start, "lastTimestamp": b_start, "count": 1})
objects.append({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "bench-0-r2d2x.18c2", "namespace": "train"},
                "involvedObject": {"kind": "Pod", "namespace": "train", "name": "bench-0-r2d2x", "apiVersion": "v1"},
                "reason": "Scheduled", "message": "Successfully assigned train/bench-0-r2d2x to gpu-node-04", "type": "Normal",
                "source": {"component": "default-scheduler"}, "firstTimestamp": b_start, "lastTimestamp": b_start, "count": 1})
# A Workload still running (admitted, its pod on gpu-node-05): not an
# attempt yet, but --record-placement stores where its pod is.
R_JOB, R_WL = "1a2b3c4d-0000-4000-8000-00000000c001", "1a2b3c4d-0000-4000-8000-00000000c002"
objects.append({
    "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
    "metadata": {"name": "job-serve-9a8b7", "namespace": "train", "uid": R_WL, "creationTimestamp": start,
                 "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "serve", "uid": R_JOB, "controller": True}]},
    "spec": {"queueName": "gpu-queue", "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "serve", "image": "serve:1"}]}}}]},
    "status": {"admission": {"clusterQueue": "gpu-cluster-queue", "podSetAssignments": [{"name": "main", "count": 1}]},
               "conditions": [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "Quota reserved", "lastTransitionTime": start},
                              {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted", "lastTransitionTime": start}]},
})
objects.append({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "serve-0-k4j7w", "namespace": "train", "creationTimestamp": start,
                 "labels": {"batch.kubernetes.io/controller-uid": R_JOB, "controller-uid": R_JOB, "batch.kubernetes.io/job-name": "serve"},
                 "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "serve", "uid": R_JOB, "controller": True}]},
    "spec": {"nodeName": "gpu-node-05", "containers": [{"name": "serve", "image": "serve:1"}]},
    "status": {"phase": "Running", "startTime": start,
               "containerStatuses": [{"name": "serve", "ready": True, "restartCount": 0, "started": True, "state": {"running": {"startedAt": start}}}]},
})
json.dump({"objects": objects, "logs": logs}, open(out, "w"), indent=1)
print(f"make_kube_fixture: {len(objects)} objects, {sum(len(v) for v in logs.values())} log lines")
