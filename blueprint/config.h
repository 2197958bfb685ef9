// The blueprint's configuration: one YAML file (docs/blueprint-config.md).
//
// load_config() reads and validates the whole file before anything runs.
// Every problem is a diagnostic with a stable code (B01xx), `file:line:col`,
// the source line and a caret; an unknown key also names the nearest known
// one ("unknown key 'lokii' (did you mean 'loki'?)"). Relative paths are
// resolved against the directory of the file. Secrets never live in the
// file: tokens and passwords are named by `*_file` / `*_env` keys and read
// when used, and a store URL that carries a password is refused.
//
// yaml-cpp is fenced here: no YAML type or exception leaves config.cpp.
// Thread-safety: the result is a plain value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/diagnostics.h"

namespace culprit::blueprint {

// A workload listed in the configuration (static discovery).
struct StaticWorkloadConfig {
  std::string id;
  std::string scheduler = "static";
  std::string cluster;
  std::optional<int64_t> start, end;  // ns since the epoch
  std::vector<std::string> nodes;     // expanded from the hostlist(s) given
  std::string state;                  // upper case, "" when not given
  std::optional<int64_t> exit_code;
};

struct StaticDiscoveryConfig {
  bool enabled = false;
  std::vector<std::string> bundles;   // bundle directories (globs already expanded, sorted)
  std::vector<StaticWorkloadConfig> workloads;
};

struct SlurmDiscoveryConfig {
  bool enabled = false;
  std::string sacct = "sacct";        // the sacct executable (a name is looked up in PATH)
  std::string slurm_conf;             // sets SLURM_CONF for sacct when not ""
  std::vector<std::string> clusters;  // sacct -M; empty: the local cluster
  // Terminal states to attribute; the rest (COMPLETED by default) are ignored.
  std::vector<std::string> states = {"BOOT_FAIL", "CANCELLED", "DEADLINE", "FAILED", "NODE_FAIL",
                                     "OUT_OF_MEMORY", "PREEMPTED", "REQUEUED", "TIMEOUT"};
  bool step_attempts = false;         // attempts: step (each srun step its own attempt) instead of job
  int64_t lookback = 24LL * 3600 * 1000000000;   // --once, and the first --watch poll: jobs ended this recently
  int64_t timeout = 60LL * 1000000000;           // a sacct call that takes longer is killed
};

// One `collectors.files` entry: where one log source lives.
struct FileSourceConfig {
  std::string source;                 // log source name: kernel, app, fabricmanager, ...
  std::string path;                   // template with {node} {job_id} {source} {date} {cluster} {user} {work_dir}, globs
  std::string host;                   // the host of files whose path has no {node}: a control-plane host, or "{batch_node}"
  std::string format = "auto";        // auto | plain | gzip
  int line = 0;                       // where it was configured (for messages)
};

struct FilesCollectorConfig {
  std::vector<FileSourceConfig> sources;
  uint64_t max_file_bytes = 0;        // 0: no limit; larger files are read up to this many bytes of the window
};

struct ServiceClientConfig {
  std::string url;                    // http(s)://host:port of a `culprit serve`
  std::string token_file, token_env;  // the bearer token: first line of the file, or the variable
  int64_t timeout = 300LL * 1000000000;
};

struct AttributionConfig {
  std::vector<std::string> rules;     // extra rule directories or files
  bool stdlib = true;
  std::string engine;                 // "" (default: jit, or $CULPRIT_ENGINE), "jit", "interp"
  unsigned threads = 0;               // scan threads per attempt (0: all cores)
  int64_t slack_before = 10LL * 60 * 1000000000;
  int64_t slack_after = 30LL * 60 * 1000000000;
  std::optional<ServiceClientConfig> service;  // attribute through a service instead of in-process
};

struct StoreConfig {
  std::string url;                    // sqlite:PATH | postgresql://... ; "" = sqlite:culprit.db in the working directory
  std::string password_file, password_env;  // PostgreSQL password (libpq's PGPASSWORD/PGPASSFILE also work)
};

struct OutputConfig {
  std::string stdout_format = "jsonl";  // jsonl | text | none
  bool explain = false;                 // store and print the derivation trail
};

struct WatchConfig {
  int64_t interval = 60LL * 1000000000; // between polls
  int64_t overlap = 10LL * 60 * 1000000000;  // each poll looks this far before the last one's end (sacct lags)
};

struct BlueprintConfig {
  std::string path;                   // the file, as given
  std::string dir;                    // its directory (absolute)
  std::string cluster;                // a name for this blueprint's cluster ("" when not given)
  StaticDiscoveryConfig static_discovery;
  SlurmDiscoveryConfig slurm;
  FilesCollectorConfig files;
  AttributionConfig attribution;
  StoreConfig store;
  OutputConfig output;
  WatchConfig watch;
};

// Reads and validates `path`. False when it has an error; `diags` holds
// every problem found (warnings too) and `io_error` an I/O failure.
bool load_config(const std::string& path, BlueprintConfig& out, Diagnostics& diags, std::string& io_error);
// The same from text (tests); `path` is used in messages and to resolve
// relative paths.
bool parse_config(const std::string& path, const std::string& text, BlueprintConfig& out, Diagnostics& diags);

// The known name nearest to `word` (edit distance at most 2, or a prefix
// relation), or "".
std::string nearest_name(const std::string& word, const std::vector<std::string>& known);

// Reads a secret named by a file or an environment variable (file first).
// False with `err` when neither gives a non-empty value; the secret is the
// file's first line without trailing blanks.
bool read_secret(const std::string& file, const std::string& env, std::string& secret, std::string& err);

}  // namespace culprit::blueprint
