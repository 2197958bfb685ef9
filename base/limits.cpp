#include "base/limits.h"

#include <fmt/format.h>

namespace culprit::limits {

const std::vector<Entry>& all() {
  static const std::vector<Entry> entries = {
      {"json_depth", kJsonDepth, "levels", "nesting of arrays and objects in a JSON document"},
      {"context_bytes", kContextBytes, "bytes", "a workload context (context.json or a request's context)"},
      {"context_nodes", kContextNodes, "nodes", "entries of a context's \"nodes\""},
      {"unread_entries", kUnreadEntries, "entries", "ignored files, refused files and warnings sent with evidence (unread)"},
      {"unread_entry_bytes", kUnreadEntryBytes, "bytes", "one path, reason or warning of unread"},
      {"coverage_node_names", kCoverageNodeNames, "names", "node names listed per source in coverage, or in a warning (the count is given)"},
      {"observation_line", kObservationLine, "bytes", "one NDJSON line of observations"},
      {"log_line", kLogLine, "bytes", "bytes kept of one log line (the rest is skipped and counted)"},
      {"evidence_text", kEvidenceText, "bytes", "a log line quoted as evidence"},
      {"events_per_file", kEventsPerFile, "events", "events kept per log file (the rest are counted)"},
      {"events_per_request", kEventsPerRequest, "events", "events kept per service attribution, all streams together (the rest are counted)"},
      {"eval_steps_base", kEvalStepsBase, "steps", "evaluation steps of the rules per attribution (candidates of queries, events scanned), before the events' share"},
      {"eval_steps_per_event", kEvalStepsPerEvent, "steps", "evaluation steps each event adds to its attribution's budget (eval_steps)"},
      {"summary_bytes", kSummaryBytes, "bytes", "a symptom's summary or an outcome's reason"},
      {"gzip_file_bytes", kGzipFileBytes, "bytes", "bytes the blueprint's files collector decompresses from one gzip file"},
      {"gzip_attempt_bytes", kGzipAttemptBytes, "bytes", "bytes the files collector decompresses for one attempt, all gzip files together"},
      {"file_observation_bytes", kFileObservationBytes, "bytes", "observations the files collector keeps from one file (text, provenance, bookkeeping)"},
      {"attempt_observation_bytes", kAttemptObservationBytes, "bytes", "observations the files collector keeps for one attempt, all files together"},
      {"pickle_bytes", kPickleBytes, "bytes", "one Flight Recorder dump file (pickle or JSON)"},
      {"pickle_values", kPickleValues, "values", "values decoded from one Flight Recorder dump, shared parts counted each time they are used"},
      {"flight_recorder_entries", kFlightRecorderEntries, "entries", "entries read from one Flight Recorder dump (the newest; the rest are counted)"},
      {"flight_recorder_dumps", kFlightRecorderDumps, "files", "Flight Recorder dumps read from one bundle's traces/"},
      {"ras_report_bytes", kRasReportBytes, "bytes", "one NCCL RAS report in its JSON form (ncclras -f json)"},
      {"collection_starts", kCollectionStarts, "starts", "unfinished starts of one attempt before culprit run gives it up"},
      {"rule_file_bytes", kRuleFileBytes, "bytes", "one .attr file"},
      {"catalog_bytes", kCatalogBytes, "bytes", "all .attr files of a catalog together"},
      {"expr_depth", kExprDepth, "levels", "nesting of one rule expression"},
      {"expr_alternatives", kExprAlternatives, "operands", "operands of one chain of a binary operator"},
      {"in_list", kInList, "elements", "elements of an `in [...]` list"},
      {"keep_last", kKeepLast, "events", "events of one extractor that `keep last N` keeps per file"},
      {"regex_bytes", kRegexBytes, "bytes", "one regex"},
      {"regex_repeat", kRegexRepeat, "repetitions", "the bounds of a counted repeat {n,m}"},
      {"diagnostics", kDiagnostics, "errors", "errors printed per run"},
      {"diagnostic_bytes", kDiagnosticBytes, "bytes", "a diagnostic's message and quoted source line"},
      {"max_body", kMaxBody, "bytes", "a request body, after decompression (--max-body)"},
      {"max_session_bytes", kMaxSessionBytes, "bytes", "evidence held for one session or one-shot request (--max-session-bytes)"},
      {"max_total_bytes", kMaxTotalBytes, "bytes", "evidence and bodies held by the service (--max-total-bytes)"},
      {"max_sessions", kMaxSessions, "sessions", "open sessions (--max-sessions)"},
      {"request_head", kRequestHead, "bytes", "a request's line and headers"},
      {"header_line", kHeaderLine, "bytes", "the request line or one header line"},
      {"header_count", kHeaderCount, "fields", "header fields of one request"},
      {"connections", kConnections, "connections", "open client connections (--max-connections)"},
      {"requests_per_connection", kRequestsPerConnection, "requests", "requests answered on one connection"},
      {"header_timeout", kHeaderTimeoutSeconds, "seconds", "first byte of a request to the end of its headers (--header-timeout)"},
      {"request_timeout", kRequestTimeoutSeconds, "seconds", "first byte of a request to the end of its body (--request-timeout)"},
      {"write_timeout", kWriteTimeoutSeconds, "seconds", "time for a client to take an answer (--write-timeout)"},
      {"keep_alive", kKeepAliveSeconds, "seconds", "idle time between requests on a connection (--keep-alive)"},
      {"drain_timeout", kDrainTimeoutSeconds, "seconds", "time requests in flight get after SIGTERM (--drain-timeout)"},
      {"config_file_bytes", kConfigFileBytes, "bytes", "the blueprint's configuration file, the recovery policy file"},
      {"secret_file_bytes", kSecretFileBytes, "bytes", "a token or password file"},
      {"config_depth", kConfigDepth, "levels", "nesting of YAML mappings and sequences in the configuration and the policy"},
      {"config_nodes", kConfigNodes, "nodes", "node names the static workloads of a configuration expand to, all together"},
      {"duration", static_cast<uint64_t>(kDurationDays), "days", "any duration in the configuration, the policy or on the command line"},
  };
  return entries;
}

uint64_t eval_steps_for(uint64_t events) {
  // Checked: a count near 2^64 must give the largest budget, not a small one.
  uint64_t share = 0, total = 0;
  if (__builtin_mul_overflow(events, kEvalStepsPerEvent, &share)) return UINT64_MAX;
  if (__builtin_add_overflow(share, kEvalStepsBase, &total)) return UINT64_MAX;
  return total;
}

std::string exceeded(std::string_view name, uint64_t max, std::string_view what, std::string_view where) {
  if (where.empty()) return fmt::format("limit {} exceeded: {} (at most {})", name, what, max);
  return fmt::format("limit {} exceeded: {} (at most {}) at {}", name, what, max, where);
}

}  // namespace culprit::limits
