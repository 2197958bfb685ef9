// Workload bundles: the static execution context and its local log files.
//
//   BUNDLE/context.json                 the workload (see docs/bundle.md)
//   BUNDLE/logs/<host>/<source>.log     one file per host and log source
//   BUNDLE/observations.jsonl           optional normalized observations
//   BUNDLE/traces/<host>/<prefix><rank> optional PyTorch Flight Recorder dumps
//
// load_bundle reads context.json and lists files; logs are streamed later
// by the scanner. Flight Recorder dumps are read here, each whole and
// bounded (runtime/flight_recorder.h), into `observations` of source
// flight_recorder; a dump that cannot be read is refused with its reason. Hosts not in context.nodes are control-plane hosts.
// Errors are returned as text (no exceptions escape).
//
// Confinement: nothing outside the bundle directory is read. A symbolic link
// (context.json, logs, logs/<host>, a log file, observations.jsonl) is
// followed only when its target stays inside the bundle; one that leads out,
// a broken one, and anything that is not a regular file where a file is read
// (a FIFO, a device, a socket) is refused with its reason (refused_files).
// context.json must be a regular file inside the bundle of at most
// limits::kContextBytes; a FIFO there is refused without being opened for a
// blocking read. A directory that cannot be listed (or whose listing fails
// half way) is a warning, and the rest of the bundle is still read: an
// unreadable logs/<host> does not hide its siblings, and observations.jsonl
// is found by name even when the bundle directory cannot be listed.
//
// Thread-safety: the functions below share no state; call them from any
// thread. Errors are values (false and `error`, or refused_files and
// warnings); nothing throws.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "runtime/evidence_set.h"
#include "runtime/model.h"

namespace culprit {

// A bundle directory as load_bundle found it: its context and its evidence
// (files sorted by (host, source); ignored and refused files sorted by
// path; warnings for directories that could not be listed, sorted).
struct Bundle : EvidenceSet {
  std::string root;
  WorkloadContext context;
};

// Parses a context document (the same JSON the service accepts). Unknown
// and repeated keys are rejected so typos do not silently change a verdict;
// so is a terminal state that looks like a misspelt known one ("COMPLETD"),
// with the state it probably meant. A node is a host name or {"name": ...,
// "aliases": [...]} (other names of it: FQDNs, IP addresses). The document is
// read with runtime/json_input.h (nesting bounded) and may hold at most
// limits::kContextBytes bytes and kContextNodes nodes.
bool parse_context_json(const std::string& text, WorkloadContext& out, std::string& error);
// The same for a document already parsed (by parse_json_input: its depth is
// bounded). Messages never quote more than a short part of a value.
bool parse_context(const nlohmann::json& j, WorkloadContext& out, std::string& error);
// The writer of that document: what parse_context reads back into an equal
// WorkloadContext (aliases included; tests/runtime/bundle_test.cpp holds
// the round trip). Used wherever a context leaves the process (the
// blueprint's requests to the service).
nlohmann::ordered_json context_to_json(const WorkloadContext& c);

bool load_bundle(const std::string& dir, Bundle& out, std::string& error);

// "" when the loaded bundle has at least one log file (or observations.jsonl,
// or a log it refused to read, which the verdict's coverage explains);
// otherwise what to tell
// the user (what the directory holds instead, and the layout it needs).
// Without a single log there is nothing to diagnose: most likely the wrong
// directory, or logs that were never collected, not a workload that failed
// without a trace. `culprit diagnose` refuses it (exit 2).
std::string missing_logs_message(const Bundle& b, const std::string& dir);

// The workload node a host name of the evidence stands for: the node itself;
// an alias the context gives it ("nodes": [{"name": "node-02", "aliases":
// ["10.0.0.2"]}]); an FQDN whose first label is a node's name
// ("node-02.cluster.local" for node-02); or the short name of a node given
// as an FQDN. Compared without regard to case (DNS names are not). "" when
// the host is none of the nodes (a control-plane host), or when its short
// name would fit two nodes (then `how` is kAmbiguousHost followed by the
// nodes, "a, b"). `how` is "" for the node itself, else "alias", "short
// name" or "FQDN".
inline constexpr std::string_view kAmbiguousHost = "ambiguous: ";
std::string canonical_host(const WorkloadContext& ctx, const std::string& host, std::string* how = nullptr);

// The workload node the context's `ranks` layout puts global rank `rank`
// on, or "" (the language's rank_node()): a view into `ctx`.
std::string_view rank_node(const WorkloadContext& ctx, int64_t rank);

// How many global ranks the job has by the context's `ranks` layout: N when
// the layout gives ranks 0 to N-1, none missing; 0 when it gives no layout
// or one with gaps (then it does not say how many there are).
int64_t context_world_size(const WorkloadContext& ctx);

// A source name must be a lowercase identifier ([a-z0-9_-]+); host names
// follow RFC 1123 labels plus '.' and '_'.
bool valid_source_name(std::string_view s);
bool valid_host_name(std::string_view s);

}  // namespace culprit
