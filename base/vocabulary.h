// The words of a verdict, one table for the whole program.
//
// A verdict speaks a small closed vocabulary: its status, the domain of its
// cause and the root of the cause's sub_domain, the recovery actions it
// recommends for the job and for each culprit node, and the scheduler's
// terminal state it read. The compiler checks rules against these words, the
// engine writes them, the blueprint filters and stores them, the dashboard
// offers them as filters and docs/vocabulary.md lists them. Every one of
// those reads this file, so a word is added or renamed here and nowhere else
// (tests/base/vocabulary_test.cpp checks that docs/vocabulary.md lists the
// same words, and tests/vocabulary_literals.sh that no other source spells
// them as string literals).
//
//   if (verdict.outcome.status == vocab::status::kAmbiguous) ...
//   if (!vocab::contains(vocab::domains(), word))
//     error(..., did_you_mean(word, vocab::words(vocab::domains())));
//
// Each list is in its documented order (the order a reader expects, which
// is also the order suggestions break ties in); `words()` keeps that order.
//
// Thread-safety: immutable static data; every function is pure. No
// exceptions, no allocation except in words().
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace culprit::vocab {

// One word and what it means, as docs/vocabulary.md says it.
struct Word {
  std::string_view word;
  std::string_view meaning;
  std::string_view label = {};  // actions only: the words at the head of a line (action_label)
};

// What a verdict concluded.
namespace status {
inline constexpr char kAttributed[] = "attributed";      // one cause, named
inline constexpr char kAmbiguous[] = "ambiguous";        // several candidates, none decisive
inline constexpr char kUnattributed[] = "unattributed";  // failed, cause not shown by the evidence
inline constexpr char kNoFailure[] = "no_failure";       // the attempt ended cleanly
}  // namespace status

// Whose fault a cause is.
namespace domain {
inline constexpr char kHardware[] = "hardware";
inline constexpr char kSoftware[] = "software";
inline constexpr char kInfrastructure[] = "infrastructure";
inline constexpr char kUser[] = "user";
}  // namespace domain

// What happens to the job (recovery table, docs/recovery.md).
namespace job_action {
inline constexpr char kRestart[] = "restart";
inline constexpr char kRestartExcluding[] = "restart_excluding";
inline constexpr char kStopFixConfig[] = "stop_fix_config";
inline constexpr char kStopFixCode[] = "stop_fix_code";
inline constexpr char kNone[] = "none";
}  // namespace job_action

// What happens to a culprit node.
namespace node_action {
inline constexpr char kDrain[] = "drain";
inline constexpr char kResetGpu[] = "reset_gpu";
inline constexpr char kReboot[] = "reboot";
inline constexpr char kInspectLink[] = "inspect_link";
inline constexpr char kReplaceSuspect[] = "replace_suspect";
inline constexpr char kInspect[] = "inspect";
}  // namespace node_action

// Scheduler terminal states (Slurm's JOB_STATE names as sacct prints them,
// and EVICTED for a Kubernetes workload Kueue evicted). Only the ones code
// branches on have a constant; the full list is terminal_states().
namespace state {
inline constexpr char kCompleted[] = "COMPLETED";
inline constexpr char kCancelled[] = "CANCELLED";
inline constexpr char kFailed[] = "FAILED";
inline constexpr char kTimeout[] = "TIMEOUT";
inline constexpr char kPreempted[] = "PREEMPTED";
inline constexpr char kEvicted[] = "EVICTED";
inline constexpr char kNodeFail[] = "NODE_FAIL";
inline constexpr char kOutOfMemory[] = "OUT_OF_MEMORY";
inline constexpr char kBootFail[] = "BOOT_FAIL";
inline constexpr char kDeadline[] = "DEADLINE";
inline constexpr char kRequeued[] = "REQUEUED";
}  // namespace state

std::span<const Word> statuses();
std::span<const Word> domains();
std::span<const Word> job_actions();
std::span<const Word> node_actions();
// A job or node action as an operator reads it at the head of a line
// ("Restart the job without", "Reset the GPU of", "Inspect the links of"):
// the words of the dashboard's "What to do". An unknown action is returned
// as it is.
std::string_view action_label(std::string_view action);
// Every terminal state, sorted by name (running and pending states included:
// a context may be written before the job ended).
std::span<const Word> terminal_states();
// The states in which a job is over: what a discovery's `states` filter may
// name. Sorted by name.
std::span<const Word> ended_states();

// The first dotted word of a sub_domain ("gpu" of "gpu.memory") that the
// catalog's rules use under one domain. A rule may classify under another
// root, so a site can extend the catalog; a near miss of a listed root
// ("nvlnik") is the compiler's warning E0207.
std::span<const Word> sub_domain_roots(std::string_view domain);

// Node actions that take a node out of service or touch its hardware; a
// verdict that is not attributed never carries one.
bool is_destructive(std::string_view node_action);

bool contains(std::span<const Word> list, std::string_view word);
// The words of `list`, in its order (for did_you_mean and messages).
std::vector<std::string> words(std::span<const Word> list);

}  // namespace culprit::vocab
