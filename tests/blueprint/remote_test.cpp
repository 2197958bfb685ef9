// The remote connectors' pure parts: the LogQL and PromQL they send, the
// answers they parse (Loki streams, Prometheus matrices), host mapping,
// kubeconfig resolution and the Kueue Workload -> attempt mapping. The
// wire behaviour against servers is in check_loki.sh, check_promql.sh
// (a real Prometheus) and check_kube.sh (driven by kubectl too).
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/timestamp.h"
#include "blueprint/net/kube_client.h"
#include "blueprint/discovery/kueue_discovery.h"
#include "blueprint/collect/loki_collector.h"
#include "blueprint/collect/promql_collector.h"
#include "blueprint/collect/push_down.h"
#include "tests/support/test_support.h"

using namespace culprit;
using namespace culprit::blueprint;
using nlohmann::json;

TEST_CASE("loki: the query adds an anchored host matcher and the line filter as LogQL strings") {
  std::string q = loki_query("{job=\"node-logs\"}", "host", {"node-1", "node-10"}, "(?i)xid|nccl \"x\"");
  CHECK(q == "{job=\"node-logs\", host=~\"(?:node-1|node-10)(?:[.:].*)?\"} |~ \"(?i)xid|nccl \\\"x\\\"\"");
  CHECK(loki_query("{}", "hostname", {"a.b"}, "") == "{hostname=~\"(?:a\\\\.b)(?:[.:].*)?\"}");
}

TEST_CASE("loki: strings and regexes are escaped as Go reads them") {
  CHECK(logql_quote("a\\b\"c\n\t") == "\"a\\\\b\\\"c\\n\\t\"");
  CHECK(regex_escape("node-01.example[1]+(x)|y*?^$") == "node-01\\.example\\[1\\]\\+\\(x\\)\\|y\\*\\?\\^\\$");
}

TEST_CASE("loki: a host label names a node by name, FQDN or host:port, never by prefix") {
  std::vector<std::string> nodes = {"gpu-01", "gpu-02"};
  CHECK(node_for_host("gpu-01", nodes) == "gpu-01");
  CHECK(node_for_host("gpu-02.cluster.example.org", nodes) == "gpu-02");
  CHECK(node_for_host("gpu-01:9100", nodes) == "gpu-01");
  CHECK(node_for_host("gpu-010", nodes).empty());
  CHECK(node_for_host("gpu", nodes).empty());
}

TEST_CASE("loki: streams answers are parsed with nanosecond times; errors and other result types are refused") {
  std::vector<LokiEntry> e;
  std::string err;
  REQUIRE(parse_loki_streams(R"({"status":"success","data":{"resultType":"streams","result":[
      {"stream":{"source":"kernel","host":"n1"},"values":[["1704067200000000001","NVRM: Xid 79"],["1704067200000000002","b"]]}],
      "stats":{}}})", e, err));
  REQUIRE(e.size() == 2);
  CHECK(e[0].ts == 1704067200000000001LL);
  CHECK(e[0].line == "NVRM: Xid 79");
  CHECK(e[0].labels == std::vector<std::pair<std::string, std::string>>{{"host", "n1"}, {"source", "kernel"}});
  e.clear();
  CHECK_FALSE(parse_loki_streams(R"({"status":"success","data":{"resultType":"matrix","result":[]}})", e, err));
  CHECK(err.find("not a streams result") != std::string::npos);
  CHECK_FALSE(parse_loki_streams("parse error at line 1, col 5: syntax error", e, err));
  CHECK(err.rfind("not valid JSON", 0) == 0);
}

TEST_CASE("promql: a bare metric gets the node matcher; a query places {nodes} and {hostname_label} itself") {
  PromQueryConfig q;
  q.query = "DCGM_FI_DEV_XID_ERRORS";
  CHECK(promql_text(q, "Hostname", {"n.1", "n2"}) == "DCGM_FI_DEV_XID_ERRORS{Hostname=~\"(?:n\\\\.1|n2)(?:[.:].*)?\"}");
  q.query = "max by ({hostname_label}, gpu) (DCGM_FI_DEV_XID_ERRORS{ {hostname_label}=~\"{nodes}\" })";
  CHECK(promql_text(q, "Hostname", {"n.1", "n2"}) == "max by (Hostname, gpu) (DCGM_FI_DEV_XID_ERRORS{ Hostname=~\"(?:n\\\\.1|n2)(?:[.:].*)?\" })");
}

TEST_CASE("promql: a matrix is flattened per sample, keeping __name__, the host and the asked labels; NaN and other hosts are skipped") {
  PromQueryConfig q;
  q.query = "DCGM_FI_DEV_XID_ERRORS";
  q.labels = {"gpu"};
  q.labels_given = true;
  std::vector<PromSample> s;
  int64_t skipped = 0;
  std::string err;
  REQUIRE(flatten_matrix(R"({"status":"success","data":{"resultType":"matrix","result":[
      {"metric":{"__name__":"DCGM_FI_DEV_XID_ERRORS","Hostname":"n1","gpu":"3","UUID":"GPU-1"},"values":[[1704067200,"0"],[1704067215.5,"79"],[1704067230,"NaN"]]},
      {"metric":{"__name__":"DCGM_FI_DEV_XID_ERRORS","Hostname":"other","gpu":"0"},"values":[[1704067200,"13"]]}]}})",
                         q, "Hostname", {"n1"}, s, skipped, err));
  REQUIRE(s.size() == 2);
  CHECK(s[0].metric == "DCGM_FI_DEV_XID_ERRORS");
  CHECK(s[0].host == "n1");
  CHECK(s[0].labels == "gpu=3");
  CHECK(s[0].ts == 1704067200LL * 1000000000);
  CHECK(s[1].ts == 1704067215LL * 1000000000 + 500000000);
  CHECK(s[1].value == 79);
  CHECK(skipped == 2);
  s.clear();
  CHECK_FALSE(flatten_matrix(R"({"status":"error","errorType":"bad_data","error":"1:5: parse error"})", q, "Hostname", {"n1"}, s,
                             skipped, err));
  CHECK(err.find("bad_data") != std::string::npos);
}

TEST_CASE("push-down: filters combine, and an unfilterable source makes the union unfiltered") {
  LineFilter a{"(?i)xid", 1, 0}, b{"(?i)nccl", 1, 0}, none{};
  LineFilter ab = combine_filters({&a, &b});
  CHECK(!ab.regex.empty());
  CHECK(ab.regex.find("xid") != std::string::npos);
  CHECK(ab.regex.find("nccl") != std::string::npos);
  CHECK(combine_filters({&a, &none}).regex.empty());
}

TEST_CASE("push-down: `keep last` extractors' atoms go to the tail filter, with twice their largest N per stream") {
  auto program = culprit::testing::program_for(R"(
extractor Xid from kernel {
  match /NVRM: Xid \(PCI:(?<pci>[0-9a-f:]+)\): (?<xid>\d+)/
  emit gpu.xid { xid: int(xid) }
  test { line "NVRM: Xid (PCI:0000:3b:00): 79, x" expect gpu.xid { xid: 79 } }
  test { line "NVRM: loading" expect none }
}
extractor Megatron from app keep last 2 {
  match /iteration\s+(?<n>\d+)\/\s*\d+ \| consumed samples/
  emit app.progress { n: int(n) }
  test { line " iteration 5/ 10 | consumed samples: 1" expect app.progress { n: 5 } }
  test { line "iteration" expect none }
}
extractor DeepSpeed from app keep last 3 {
  match /step=(?<n>\d+), skipped=\d+, lr=/
  emit app.progress { n: int(n) }
  test { line "step=3, skipped=0, lr=[1]" expect app.progress { n: 3 } }
  test { line "step" expect none }
}
extractor Oom from app {
  match /CUDA out of memory\. Tried to allocate/
  emit cuda.oom { }
  test { line "CUDA out of memory. Tried to allocate 2 GiB" expect cuda.oom }
  test { line "out of memory" expect none }
}
)");
  auto filters = catalog_line_filters(*program);
  const LineFilter& app = filters.at("app");
  CHECK(app.regex.find("out of memory") != std::string::npos);
  CHECK(app.regex.find("consumed samples") == std::string::npos);
  CHECK(app.regex.find("skipped=") == std::string::npos);
  CHECK(app.tail_regex.find("consumed samples") != std::string::npos);
  CHECK(app.tail_regex.find("skipped=") != std::string::npos);
  CHECK(app.tail_lines == 6);
  const LineFilter& kernel = filters.at("kernel");
  CHECK(kernel.tail_regex.empty());
  CHECK(kernel.tail_lines == 0);
  // Joined: both tails, their shares added (one selector may feed both sources).
  LineFilter both = combine_filters({&app, &kernel});
  CHECK(both.tail_regex.find("consumed samples") != std::string::npos);
  CHECK(both.tail_lines == 6);
}

TEST_CASE("push-down: a source only `keep last` extractors read is fetched whole by the main filter") {
  auto program = culprit::testing::program_for(R"(
extractor Step from app keep last 2 {
  match /training step (?<n>\d+)/
  emit app.progress { n: int(n) }
  test { line "training step 5" expect app.progress { n: 5 } }
  test { line "step" expect none }
}
)");
  auto filters = catalog_line_filters(*program);
  const LineFilter& app = filters.at("app");
  CHECK(app.regex.find("training step") != std::string::npos);
  CHECK(app.tail_regex.empty());
}

TEST_CASE("kubeconfig: the current context's server, CA and token; exec plugins are refused") {
  const char* kc = R"(apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://10.0.0.1:6443", certificate-authority: ca.crt}
contexts:
- name: ctx
  context: {cluster: c, user: u, namespace: train}
current-context: ctx
users:
- name: u
  user: {token: abc}
)";
  KubeEndpoint ep;
  std::string err;
  REQUIRE(kube_endpoint_from_kubeconfig(kc, "/etc/k", "", ep, err));
  CHECK(ep.namespace_ == "train");
  CHECK(ep.description.find("https://10.0.0.1:6443") != std::string::npos);
  std::string exec = std::string(kc).replace(std::string(kc).find("{token: abc}"), 12, "{exec: {command: aws}}");
  CHECK_FALSE(kube_endpoint_from_kubeconfig(exec, "/etc/k", "", ep, err));
  CHECK(err.find("exec") != std::string::npos);
  CHECK_FALSE(kube_endpoint_from_kubeconfig(kc, "/etc/k", "nope", ep, err));
}

namespace {

json workload(const std::string& type, const std::string& reason, const std::string& when) {
  return json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Workload",
    "metadata":{"name":"job-a-1","namespace":"train","uid":"wl-1","creationTimestamp":"2026-01-01T00:00:00Z",
      "ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"a","uid":"job-1","controller":true}]},
    "status":{"conditions":[
      {"type":"Admitted","status":"True","reason":"Admitted","lastTransitionTime":"2026-01-01T00:00:10Z"},
      {"type":")" + type + R"(","status":"True","reason":")" + reason + R"(","message":"m","lastTransitionTime":")" + when + R"("}]}})");
}

json pod(const std::string& name, const std::string& node) {
  return json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","namespace":"train","uid":"p-)" + name +
                     R"("},"spec":{"nodeName":")" + node + R"(","containers":[{"name":"main"}]},
    "status":{"phase":"Failed","startTime":"2026-01-01T00:00:12Z","containerStatuses":[{"name":"main","restartCount":0,
      "state":{"terminated":{"exitCode":1,"reason":"Error"}}}]}})");
}

}  // namespace

TEST_CASE("kueue: Finished and Evicted conditions map to attempt states, keyed by namespace, name and end") {
  KueueDiscoveryConfig cfg;
  struct Case {
    const char *type, *reason, *state;
  } cases[] = {{"Finished", "Failed", "FAILED"}, {"Evicted", "Preempted", "PREEMPTED"},
               {"Evicted", "MaximumExecutionTimeExceeded", "TIMEOUT"}, {"Evicted", "PodsReadyTimeout", "EVICTED"}};
  for (const auto& c : cases) {
    CAPTURE(c.reason);
    DiscoveryResult out;
    workload_attempts(workload(c.type, c.reason, "2026-01-01T01:00:00Z"), {pod("a-1", "n2"), pod("a-0", "n1")}, {}, cfg, "k8s", {}, out);
    REQUIRE(out.attempts.size() == 1);
    const Attempt& a = out.attempts[0];
    CHECK(a.context.terminal.state == c.state);
    CHECK(a.key == "kueue/k8s/train/job-a-1@" + std::to_string(*parse_rfc3339("2026-01-01T01:00:00Z") / 1000000000));
    CHECK(a.context.nodes == std::vector<std::string>{"n1", "n2"});
    CHECK(a.context.scheduler == "kubernetes");
    REQUIRE(a.kubernetes.pods.size() == 2);
    CHECK(a.kubernetes.pods[0].name == "a-0");
  }
  // Succeeded is COMPLETED, which is not attributed by default.
  DiscoveryResult out;
  workload_attempts(workload("Finished", "Succeeded", "2026-01-01T01:00:00Z"), {pod("a-0", "n1")}, {}, cfg, "k8s", {}, out);
  CHECK(out.attempts.empty());
  CHECK(out.ignored == 1);
}

TEST_CASE("kueue: a pod's nodeName is held to the context's node-name rule (issue 38)") {
  KueueDiscoveryConfig cfg;
  // spec.nodeName fills {node} in path templates and the drain command.
  for (const char* bad : {"../../etc", "n$(touch PWNED)", "-n", "n\\u001b]0;x\\u0007"}) {
    CAPTURE(bad);
    DiscoveryResult out;
    workload_attempts(workload("Finished", "Failed", "2026-01-01T01:00:00Z"), {pod("a-0", "n1"), pod("a-1", bad)}, {}, cfg,
                      "k8s", {}, out);
    CHECK(out.attempts.empty());
    REQUIRE(out.warnings.size() == 1);
    CHECK(out.warnings[0].find("kueue/k8s/train/job-a-1@") == 0);
    CHECK(out.warnings[0].find("skipped: invalid node name") != std::string::npos);
    CHECK(out.warnings[0].find('\x1b') == std::string::npos);
  }
  DiscoveryResult out;
  workload_attempts(workload("Finished", "Failed", "2026-01-01T01:00:00Z"), {pod("a-0", "gpu-node-01.cluster.local")}, {},
                    cfg, "k8s", {}, out);
  CHECK(out.warnings.empty());
  REQUIRE(out.attempts.size() == 1);
}

TEST_CASE("kueue: a Job's pods are selected by its controller uid") {
  bool owners_are_pods = true;
  std::string sel = pod_selector_for(workload("Finished", "Failed", "2026-01-01T01:00:00Z"), "", owners_are_pods);
  CHECK(sel.find("controller-uid") != std::string::npos);
  CHECK(sel.find("job-1") != std::string::npos);
  CHECK_FALSE(owners_are_pods);
}
