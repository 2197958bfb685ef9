// Every bound Culprit puts on its input, in one place.
//
// Hostile or broken input (a context nested 100,000 deep, 50 MB of rules, a
// regex with a repeat of 30,000, a client that sends one header line every 5
// seconds) must get a clear error, never a crash, a hang or unbounded
// memory. Each bound below has a stable name; exceeding it is reported as
//
//   limit NAME exceeded: WHAT (at most MAX) at WHERE
//
// by every front end: the compiler as a diagnostic (codes E0701..E0799,
// docs/language.md), the runtime as its error text or a coverage entry, the
// service as a 4xx answer whose details carry {"limit": MAX, "name": NAME}.
// docs/robustness.md lists them all with their behaviour and tests;
// tests/base/limits_test.cpp checks that the list and the document agree.
//
// The values are chosen far above anything real (the bundled catalog's
// longest regex is under 1 KiB, its deepest expression under 10 levels; the
// largest training jobs run on ~12,500 nodes) and far below what would hurt
// (stack depth, seconds of compile time, gigabytes). The service's sizes and
// deadlines are defaults its options override (docs/service.md); the others
// are fixed.
//
// Thread-safety: constants only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace culprit::limits {

// ---------------------------------------------------------------- JSON
// Nesting of arrays and objects in any JSON document Culprit reads
// (context.json, observations, service bodies). Real documents nest < 5.
inline constexpr size_t kJsonDepth = 64;

// ------------------------------------------------------------- context
inline constexpr size_t kContextBytes = 4u << 20;   // context.json, or the context of a request
inline constexpr size_t kContextNodes = 32768;      // entries of "nodes"
// Node names a verdict lists where the list would repeat for every source
// (coverage.sources.*.nodes_missing) or fill a warning: the first this many
// in sort order, the count given beside them. The one complete list is
// coverage.nodes_without_logs. Without it a 3.6 MB context of 32,768 long
// node names and no evidence got a 50.9 MB answer (14 times the request):
// every name once per source and again in the warnings; now 7.8 MB.
inline constexpr size_t kCoverageNodeNames = 64;

// What a carrier could not read, sent with evidence to the service
// (runtime/unread_json.h): entries of ignored_files, refused_files and
// warnings together, and the bytes of each string.
inline constexpr size_t kUnreadEntries = 65536;
inline constexpr size_t kUnreadEntryBytes = 4096;

// -------------------------------------------------------- observations
inline constexpr size_t kObservationLine = 16u << 20;  // one NDJSON line (observations.jsonl, bodies)

// ---------------------------------------------------------------- logs
inline constexpr size_t kLogLine = 1u << 20;         // bytes kept of one log line (the rest is counted)
inline constexpr size_t kEvidenceText = 4096;        // bytes of a line quoted as evidence
inline constexpr size_t kEventsPerFile = 100000;     // events kept per file (the rest are counted)
inline constexpr size_t kEventsPerRequest = 50000;   // service: events kept per attribution, all streams together
inline constexpr size_t kSummaryBytes = 4096;        // a symptom's summary, an outcome's reason

// ---------------------------------------------------- blueprint collection
// What the files collector of `culprit run` reads and holds for one attempt
// (blueprint/collect/files_collector.h). Files it hands to the scanner whole cost no
// memory; these bound what it cannot hand over: gzip rotations, decompressed
// as a stream, and the lines of a file cut at a window bound, held as
// observations until the attempt is attributed. Observation bytes count a
// line's text, its provenance and the observation's own bookkeeping, so a
// million empty lines cost what they hold. A cut is a collector error in
// coverage; the attempt is still attributed. Before these, a 1 MB gzip of
// repeated kernel lines grew `culprit run` to 2.3 GB and 3.2 MB aborted it.
inline constexpr size_t kGzipFileBytes = 1ull << 30;             // bytes decompressed from one gzip file
inline constexpr size_t kGzipAttemptBytes = 4ull << 30;          // bytes decompressed for one attempt, all files
inline constexpr size_t kFileObservationBytes = 128u << 20;      // observations kept from one file
inline constexpr size_t kAttemptObservationBytes = 512u << 20;   // observations kept for one attempt, all files
// Starts of one attempt that did not finish (the process died collecting or
// attributing it) before `culprit run` gives it up, so that no input can
// crash every run (blueprint/runner.h).
inline constexpr size_t kCollectionStarts = 3;

// ---------------------------------------------------- Flight Recorder dumps
// One dump file of PyTorch's Flight Recorder (runtime/pickle_reader.h,
// runtime/flight_recorder.h). A dump of 20,000 entries with stack frames is
// about 12 MB and 1.5 million pickle values; the bounds leave room for
// larger buffers while keeping one hostile file's decoded form under about
// a gigabyte. Entries beyond kFlightRecorderEntries (the newest are kept)
// are counted in coverage.
inline constexpr size_t kPickleBytes = 64u << 20;             // one dump file
inline constexpr size_t kPickleValues = 16u << 20;            // values decoded from one dump
inline constexpr size_t kFlightRecorderEntries = 100000;      // entries read from one dump
inline constexpr size_t kFlightRecorderDumps = 65536;         // dump files read from one bundle

// ------------------------------------------------------- NCCL RAS reports
// One `ncclras -f json` document (runtime/nccl_ras_report.h), read whole. A
// rank's entry is about 600 bytes: a job of 8,192 ranks in four
// communicators each is about 20 MB.
inline constexpr size_t kRasReportBytes = 64u << 20;

// ---------------------------------------------------------- evaluation
// Steps the rules of one attribution may take (candidates handed to
// queries, events scans look at; runtime/engine.h), the budget named
// `eval_steps` in messages: kEvalStepsBase plus kEvalStepsPerEvent for each
// event the engine receives (eval_steps_for). It grows with the evidence
// because the work of real rules does: the 98 example bundles take at most
// 2,543 steps and a bundle of 42,779 events 199,393 (26 times below its
// budget), while a nesting of unindexed scans grows as a power of the
// events. About 4.2 million steps run per CPU-second, so the budget costs at
// most a quarter of a second plus 24 us per event (1.4 s at the service's
// events_per_request). Spent, the run stops and is `unattributed` with a
// coverage warning naming the rule.
inline constexpr uint64_t kEvalStepsBase = 1000000;
inline constexpr uint64_t kEvalStepsPerEvent = 100;
// kEvalStepsBase + kEvalStepsPerEvent * events, saturating at UINT64_MAX.
uint64_t eval_steps_for(uint64_t events);

// --------------------------------------------------------------- rules
inline constexpr size_t kRuleFileBytes = 1u << 20;   // one .attr file (the largest bundled one is 32 KB)
inline constexpr size_t kCatalogBytes = 4u << 20;    // all .attr files of a catalog together (bundled: 240 KB)
inline constexpr size_t kExprDepth = 128;            // nesting of one expression (parentheses, calls, not, -)
inline constexpr size_t kExprAlternatives = 512;     // operands of one chain of `or`, `and`, `+`, ...
inline constexpr size_t kInList = 1024;              // elements of an `in [...]` list
inline constexpr size_t kKeepLast = 1024;            // events of one extractor kept per file by `keep last N`
inline constexpr size_t kRegexBytes = 16384;         // one regex
inline constexpr size_t kRegexRepeat = 1000;         // a bounded repeat {n,m}: n and m
inline constexpr size_t kDiagnostics = 20;           // errors printed per run (then "too many errors")
inline constexpr size_t kDiagnosticBytes = 1024;     // a diagnostic's message and its quoted source line

// ------------------------------------------------------------- service
inline constexpr size_t kMaxBody = 64u << 20;              // request body (after decompression)
inline constexpr size_t kMaxSessionBytes = 512u << 20;     // evidence held per session / one-shot request
inline constexpr size_t kMaxTotalBytes = 2048u << 20;      // evidence and bodies held by the whole service
inline constexpr size_t kMaxSessions = 1000;               // open sessions
inline constexpr size_t kRequestHead = 64u << 10;          // request line + headers
inline constexpr size_t kHeaderLine = 8u << 10;            // one header line, or the request line
inline constexpr size_t kHeaderCount = 100;                // header fields of one request
inline constexpr size_t kConnections = 1024;               // open client connections
inline constexpr size_t kRequestsPerConnection = 1000;     // then the connection is closed after its answer
inline constexpr int kHeaderTimeoutSeconds = 10;           // first byte of a request -> end of its headers
inline constexpr int kRequestTimeoutSeconds = 60;          // first byte of a request -> end of its body
inline constexpr int kWriteTimeoutSeconds = 10;            // an answer must be taken by the client in this time
inline constexpr int kKeepAliveSeconds = 5;                // idle time between requests on one connection
inline constexpr int kDrainTimeoutSeconds = 10;            // SIGTERM: requests in flight get this long

// --------------------------------------------------- blueprint input files
// Files an operator names to `culprit run` and the other store commands: the
// configuration, the recovery policy, token and password files. Each must be
// a regular file (a FIFO or a device would block or never end) of at most:
inline constexpr size_t kConfigFileBytes = 4u << 20;   // the configuration, the policy (real ones: < 10 KiB)
inline constexpr size_t kSecretFileBytes = 64u << 10;  // a token or password file (real ones: < 4 KiB)
// Nesting of YAML mappings and sequences in the configuration and the
// policy (their schemas nest at most 6 deep). yaml-cpp parses recursively.
inline constexpr size_t kConfigDepth = 32;
// Node names the static workloads of a configuration expand to, all
// together (each workload is also a context: at most kContextNodes).
inline constexpr size_t kConfigNodes = 1u << 20;
// Any duration in the configuration, the policy or on the command line
// (slack, lookback, within, timeouts): an instant plus or minus it stays
// far inside int64 nanoseconds (about 292 years each way).
inline constexpr int64_t kDurationDays = 3650;
inline constexpr int64_t kMaxDurationNs = kDurationDays * 86400LL * 1000000000LL;

// One entry per limit, for documentation and tests.
struct Entry {
  std::string_view name;   // the stable name used in messages ("json_depth")
  uint64_t value;          // its (default) value
  std::string_view unit;   // "bytes", "levels", "seconds", ...
  std::string_view what;   // what it bounds
};
const std::vector<Entry>& all();

// "limit NAME exceeded: WHAT (at most MAX)" plus " at WHERE" when `where`
// is not empty. `what` says what was found ("the context lists 1000000
// nodes"), `where` where (a file, a JSON pointer, a line).
std::string exceeded(std::string_view name, uint64_t max, std::string_view what, std::string_view where = {});

}  // namespace culprit::limits
