// The runtime's data model: evidence, events, symptoms, coverage, verdicts.
//
// These are plain structs passed between the pipeline stages:
//   scanner (lines -> Event) -> engine (Event -> Symptom -> Outcome) -> Verdict
// and rendered by verdict_json.h / verdict_text.h. Ownership is by value; a
// Verdict is self-contained (it copies the text of its evidence), so it can
// outlive the catalog and the bundle it came from.
// Thread-safety: plain data, no shared state; a const Verdict may be read
// from several threads.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/chunked_vector.h"
#include "base/shared_string.h"
#include "base/vocabulary.h"
#include "compiler/value.h"

namespace culprit {

// Where a piece of evidence came from. `line` is 1-based; `offset` is the
// byte offset of the line in its file. The strings are shared: a copy of an
// Evidence (into a derived event, a symptom, a verdict) copies no text, and
// the events of one file share its host, source and file names.
struct Evidence {
  SharedString host, source, file;
  int64_t line = 0;
  int64_t offset = 0;
  std::optional<int64_t> ts;     // nanoseconds since the epoch, UTC
  // "line" | "inherited" | "boot-anchored" | "observation" | "rule" | "" (none):
  // always one of these literals (static storage), never a computed string.
  std::string_view ts_origin;
  SharedString text;             // valid UTF-8, possibly truncated
  // dmesg seconds since boot (ns) of a line whose file never anchored them to
  // the wall clock: no time, but an exact distance to other lines of its file.
  std::optional<int64_t> boot;
};

struct Event {
  int32_t kind = 0;              // ir event kind id
  SharedString host;             // node name for workload nodes, host name for control-plane hosts
  bool control_plane = false;
  // Read from a job's combined output (srun's collected stdout of several
  // nodes' tasks, or a rank tag nothing in a relay places), on a line that
  // does not say whose it is: `host` is where the output was collected, not
  // where the line was written (ScanResult::events_unplaced). A derived
  // event is unplaced when every item it was made from is. (Beside
  // control_plane, in its padding: events are the bulk of a diagnosis's memory.)
  bool unplaced = false;
  Evidence where;                // for a derived event: the first evidence item
  std::vector<Evidence> derived_from;  // non-empty only for events emitted by rules
  std::string_view producer;     // extractor or rule name: points into the catalog (or a literal), which outlives the events
  std::vector<Value> fields;     // by slot of the kind's schema
  std::optional<int64_t> ts() const { return where.ts; }
};

// The events of one file (or one batch): they never move once made, so the
// engine can hold pointers to them (base/chunked_vector.h).
using EventList = ChunkedVector<Event>;

enum class SymptomState { Active, Demoted, Scrubbed };

struct StateChange {
  std::string rule, reason, cause;  // cause: id of the symptom that explains this one ("" if none)
};

struct Symptom {
  std::string id;                 // KIND@NODE[#KEY]; node "job" for job-level symptoms
  int32_t kind = 0;
  std::string kind_name;
  std::string node;               // "" for job-level
  bool control_plane = false;
  std::string key;
  std::optional<int64_t> first, last;
  // The earliest time its evidence carried itself (a line's own stamp, a time
  // the creating rule gave with `at`), never one inherited from a neighbour
  // line; and where its first evidence item was read ("host/source/file",
  // line). The temporal order construct uses them (docs/language.md §6.1).
  std::optional<int64_t> own_first;
  std::string place;
  int64_t place_line = 0;
  std::optional<int64_t> place_ts;       // the time of that evidence item (to keep the earliest)
  std::optional<int64_t> place_boot;     // its unanchored dmesg boot time (Evidence::boot)
  std::string file;                      // the file path of that evidence item (Evidence::file)
  std::string source;                    // and its source
  int64_t count = 0;
  int64_t priority = 0;
  std::string summary;
  std::vector<Value> fields;
  std::vector<std::string> field_names;  // by slot; filled in engine output
  SymptomState state = SymptomState::Active;
  std::string rule;               // rule that created it
  std::optional<StateChange> demoted_by, scrubbed_by;
  std::vector<Evidence> evidence; // capped; evidence_total counts all
  int64_t evidence_total = 0;
  // The log sources of all its evidence (sorted, unique), not only of the
  // capped list above: recovery (runtime/recovery.h) asks whether anything
  // but the job's own output ("app") backs a claim on a node.
  std::vector<std::string> evidence_sources;
  std::optional<std::pair<std::string, std::string>> classification;  // (domain, sub_domain)
  bool generic = false;           // classified as generic evidence (`classify ... generic`)
  bool class_on_job = false;      // classified as the job's own (`classify ... on job`): names no culprit node
  // Its node is only the host whose combined output held its lines
  // (Event::unplaced, every item) and no rule named one with `on`: the
  // node that wrote them is not known, so it names no culprit.
  bool node_unplaced = false;
};

// What was read for one source.
struct SourceCoverage {
  int64_t nodes_expected = 0;          // workload nodes
  std::vector<std::string> nodes_with_data;  // workload nodes that had this source
  std::vector<std::string> nodes_missing;
  std::vector<std::string> control_plane_hosts;
  int64_t files = 0;
  int64_t bytes_read = 0;
  int64_t lines_read = 0;
  int64_t lines_out_of_scope = 0;
  int64_t lines_invalid_utf8 = 0;
  int64_t lines_truncated = 0;
  int64_t events_without_time = 0;     // events whose line had no time and inherited none
  int64_t events = 0;
  int64_t events_out_of_scope = 0;
  int64_t events_superseded = 0;       // `keep last N` events replaced by later ones (progress lines)
  int64_t events_rank_unplaced = 0;    // events of a line tagged with a rank whose node is unknown (kept on the file's host)
  int64_t events_unplaced = 0;         // events of combined-output lines that do not say whose they are (name no node)
  std::vector<std::string> errors;
};

// What one collector (the component that fetched evidence from where the
// cluster keeps it: files, Loki, pod logs, PromQL) says about its work for
// one workload attempt. Collectors write these; the verdict carries them in
// coverage.collectors so an operator sees which evidence was never gathered
// and why, and the text report turns every failed or partial one into a
// warning. A collector that ran but found nothing is "empty", never absent.
struct CollectorReport {
  std::string collector;               // e.g. "files", "loki", "kubernetes-pod-logs", "promql"
  std::string source;                  // the log source it fed, or "" for several
  std::string status = "ok";           // "ok" | "partial" | "empty" | "failed"
  std::string reason;                  // why it is not "ok" (one sentence), else ""
  std::vector<std::string> nodes_expected;  // sorted: the nodes it was asked about
  std::vector<std::string> nodes_covered;   // sorted: the nodes it returned evidence for
  int64_t observations = 0;            // log lines and samples it returned
  int64_t bytes = 0;                   // bytes of evidence it returned
  std::vector<std::string> errors;     // sorted: individual failures (a file, a query, a page)
};

struct Coverage {
  std::map<std::string, SourceCoverage> sources;   // by source name
  std::vector<std::string> nodes_without_logs;     // workload nodes with no data at all
  std::vector<std::string> control_plane_hosts;
  std::vector<std::string> ignored_files;          // files in the bundle that are not logs/<host>/<source>.log
  // Hosts of the evidence read as a workload node under another name
  // (logs/node-02.cluster.local/ as node-02), sorted by host.
  struct HostAlias {
    std::string host, node, how;  // how: "alias" (given in the context), "short name", "FQDN"
  };
  std::vector<HostAlias> host_aliases;
  std::vector<CollectorReport> collectors;          // sorted by (collector, source); empty for a bundle
  std::vector<std::string> warnings;
  // Extractors that read a source this run read lines of, and matched none
  // of them: "why didn't my rule fire?" (sorted; shown with --explain).
  std::vector<std::string> silent_extractors;
};

struct TrailEntry {
  std::string stage, rule, action, target, detail;
  std::string rule_at;  // where the rule is written: "pytorch.attr:300" (file name and line), "" when unknown
};

// How strongly the evidence supports a class (runtime/outcome.h): specific
// evidence names its nodes; generic evidence (`classify ... generic`) names a
// node only as the single origin of the class, and the same generic failure
// on several nodes at once names none.
namespace basis {
inline constexpr const char* kSpecific = "specific";
inline constexpr const char* kSingleOriginGeneric = "single_origin_generic";
inline constexpr const char* kGenericNoSingleOrigin = "generic_no_single_origin";
// Generic evidence on one node while other nodes' logs of the same sources
// were not read: whether it was first there, or everywhere, cannot be seen.
inline constexpr const char* kGenericOriginUnseen = "generic_origin_unseen";
inline constexpr const char* kNone = "none";
}  // namespace basis

struct Candidate {
  std::string domain, sub_domain;
  std::vector<std::string> nodes;
  std::vector<std::string> symptoms;   // ids
  std::string basis = basis::kSpecific;
  std::vector<std::string> generic_nodes;  // generic_no_single_origin / generic_origin_unseen, or a class of the job's own: the nodes it was seen on (not culprits)
  bool on_job = false;                     // every symptom was classified `on job`: the job's own failure, no culprit node
  // Hosts whose combined output held its evidence on lines that do not say
  // which node wrote them (Symptom::node_unplaced): not culprits.
  std::vector<std::string> collected_on;
};

struct Outcome {
  std::string status = vocab::status::kUnattributed;
  std::string domain, sub_domain;
  std::vector<std::string> culprit_nodes;
  std::string root_cause;              // symptom id or ""
  std::string root_cause_summary;
  std::vector<Candidate> candidates;
  std::string basis = basis::kNone;    // an attributed verdict's candidate's; "none" otherwise
  std::string overridden_by, override_reason;  // set by a post_outcome rule
};

// One recommended action (runtime/recovery.h, docs/recovery.md): for the job
// (scope "job") or for one culprit node (scope "node").
struct RecommendedAction {
  std::string scope;                   // "job" | "node"
  std::string node;                    // the culprit node; "" for the job
  std::string action;                  // job: restart | restart_excluding | stop_fix_config | stop_fix_code | none;
                                       // node: drain | reset_gpu | reboot | inspect_link | replace_suspect | inspect
  std::vector<std::string> nodes;      // restart_excluding: the nodes to leave out (sorted)
  std::map<std::string, std::string> target;  // what to act on: pci, links, device, port (when the cause names them)
  std::string rule;                    // the rule that made the cause symptom
  std::string basis;                   // the recovery-table entry: "class hardware/gpu.memory", "xid 48 WORKFLOW_XID_48"
  std::string reason;                  // one sentence for operators
  std::string why;                     // the reason without the action it names: the cause's class and the
                                       // recovery table's note, or why nothing follows (a page that lists
                                       // several actions of one cause says it once)
  std::vector<std::string> symptoms;   // ids of the symptoms it rests on (sorted)
  std::vector<std::string> evidence;   // "file:line" of their first evidence lines (sorted, at most 5 per symptom)
};

struct Recommendation {
  RecommendedAction job;
  std::vector<RecommendedAction> nodes;  // sorted by (node, action in vocabulary order, target)
};

struct TerminalState {
  std::string state;                  // "" when unknown
  std::optional<int64_t> exit_code;
};

struct WorkloadContext {
  std::string workload_id;
  std::string scheduler = "static";
  std::optional<int64_t> start, end;
  std::vector<std::string> nodes;     // sorted, unique
  // Other names of the nodes (FQDNs, IP addresses) as the context gave them:
  // node -> its aliases, sorted. Log hosts are matched against them (and
  // against FQDN/short-name forms, runtime/bundle.h canonical_host).
  std::map<std::string, std::vector<std::string>> aliases;
  // Where the job's processes ran, when whoever wrote the context knows it (a
  // collector, a hostfile's slots, the operator): each node's global ranks
  // (PyTorch's and MPI's numbering) and its srun task ids, as inclusive
  // ranges, sorted by `first`, never overlapping. A rank-tagged line that its
  // own file does not place is placed by them (runtime/scanner.h).
  struct RankRange {
    int64_t first = 0, last = 0;
    std::string node;
  };
  std::vector<RankRange> ranks, tasks;
  TerminalState terminal;
};

// One rule catalog part that contributed to a verdict (see ir::CatalogPartInfo).
struct CatalogRef {
  std::string name, version, digest;
};

struct EngineInfo {
  std::string culprit_version, evaluator = "interpreter";
  std::string catalog_name, catalog_version, catalog_digest;
  std::vector<CatalogRef> catalog_parts;   // every part, in load order (the first is catalog_name's)
  std::string hyperscan_version, re2_version, antlr_version;
  std::string recovery_digest;        // "sha256:..." over the recovery tables read; "" when there was none
};

// Where a hang is, when the evidence localises it (runtime/hang_location.h):
// the outcome detail `hang` of the verdict. Not a cause: the verdict's status
// stays what the rules decided.
struct HangLocation {
  std::string kind;                         // straggler | desync | stalled_collective
  std::optional<int64_t> group;             // process group id (PyTorch's pg id), when known
  std::string group_desc;                   // "default_pg", "tp", ... ("" when unknown)
  std::optional<int64_t> seq;               // the collective the others waited in (its sequence id in the group)
  std::string op;                           // its operation ("nccl:all_reduce", "ALLREDUCE"; "" when unknown)
  std::vector<int64_t> laggard_ranks;       // sorted
  std::vector<std::string> laggard_nodes;   // sorted; control-plane hosts never
  std::string source;                       // what localised it: flight_recorder | logs | ras
  std::string summary;                      // one sentence, for the report's first lines
  std::vector<std::string> evidence;        // ids of the symptoms it rests on (sorted)
};

struct Verdict {
  WorkloadContext workload;
  Outcome outcome;
  std::vector<std::string> affected_nodes;
  std::deque<Symptom> symptoms;       // sorted by id
  Coverage coverage;
  EngineInfo engine;
  std::vector<TrailEntry> trail;      // derivation trail (always collected; printed by --explain)
  std::optional<HangLocation> hang;   // where the hang is, when localised (runtime/hang_location.h)
  Recommendation recommendation;      // what follows from it (runtime/recovery.h); set by the Attributor
  int64_t slack_before_ns = 0, slack_after_ns = 0;
};

}  // namespace culprit
