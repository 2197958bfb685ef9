// What follows from a verdict: the recovery table and the recommendation it
// gives (docs/recovery.md).
//
// A verdict names a cause; the recovery table, a data file of the catalog
// (`recovery.table` next to the .attr files of a catalog directory), says what
// an operator does about that cause: for the job (restart, restart without the
// culprit nodes, stop and fix the configuration or the code, nothing) and for
// each culprit node (drain, reset a GPU, reboot, inspect a link, replace a
// suspect part). The table holds NVIDIA's XID resolution buckets (which XID
// asks for RESET_GPU, RESTART_BM, ...) and one line per (domain, sub_domain)
// class the rules classify; the code below only applies it, so a site changes
// what Culprit recommends by editing data, never C++.
//
//   Diagnostics diags;
//   auto table = culprit::load_recovery_table({"stdlib-rules", "site-rules"}, diags);
//   if (!table) { print diags.render(); }
//   verdict.recommendation = culprit::recommend(verdict, *table);
//
// Guarantees of recommend(): a verdict that is not `attributed` (ambiguous,
// unattributed, no_failure) gets no node action that takes a node out of
// service, whatever the table says: nothing destructive follows from a
// guess. Its job action is `none`, and its node actions only `inspect`: the
// nodes an ambiguous verdict's candidates would act on, and the nodes of a
// localised hang's laggard ranks (Verdict::hang); a hang whose ranks called
// different collectives (a desync) gets `stop_fix_code` for the job.
// Node actions go only to culprit nodes (never control-plane hosts or
// job-level symptoms). A node action also needs evidence the job does not
// write: a cause symptom whose every evidence line comes from the job's own
// output (source "app") gets `inspect` for its node instead of the table's
// actions, since any user can print "uncorrectable ECC error" from a job;
// kernel, metric, scheduler (any other source) lines lift that. The result is
// sorted and deterministic.
//
// Thread-safety: a RecoveryTable is immutable once loaded; share it freely.
// No exception escapes; problems of the file are coded diagnostics
// (E0901-E0909) with file:line:col, the line and a caret.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/diagnostics.h"
#include "compiler/ir.h"
#include "runtime/model.h"

namespace culprit {

// The actions' words (base/vocabulary.h), in the order actions are listed.
const std::vector<std::string>& job_actions();
const std::vector<std::string>& node_actions();
// Whether `s` rests only on the job's own output (every evidence source is
// "app"): such a claim about a node gets `inspect`, never a node action of
// the table. False when its sources are unknown (no evidence).
bool rests_on_job_output_only(const Symptom& s);

struct RecoveryEntry {
  std::string key;                    // "class hardware/gpu.memory", "domain hardware", "bucket RESET_GPU"
  std::string job;                    // a job action; "" for buckets
  std::vector<std::string> actions;   // node actions, and "xid" (the cause's XID bucket)
  std::string note;
  std::string where;                  // "recovery.table:42" (for messages)
};

struct RecoveryTable {
  std::map<std::string, RecoveryEntry> buckets;            // by bucket name
  std::map<int64_t, std::string> xids;                     // XID -> bucket name
  std::map<std::string, RecoveryEntry> classes;            // "domain/sub_domain" -> entry
  std::map<std::string, RecoveryEntry> domains;            // domain -> fallback entry
  std::vector<std::string> files;                          // the files read, in load order
  std::string digest;                                      // "sha256:..." over their bytes ("" when none)
};

// Reads `recovery.table` of every directory in `roots` (missing files are
// fine; later ones replace entries of earlier ones key by key). Null, with
// errors in `diags`, when a file cannot be read or does not parse. Warns
// (E0908) for every class of `catalog` (when given) that has no line and
// falls back to its domain's.
std::shared_ptr<const RecoveryTable> load_recovery_table(const std::vector<std::string>& roots, Diagnostics& diags,
                                                         const ir::Catalog* catalog = nullptr);
// One file's text (tests, and load_recovery_table). Adds to `table`.
bool parse_recovery_table(const std::string& path, const std::string& text, RecoveryTable& table, Diagnostics& diags);

// The recommendation for `verdict` under `table`.
Recommendation recommend(const Verdict& verdict, const RecoveryTable& table);

}  // namespace culprit
