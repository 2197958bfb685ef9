#include "base/vocabulary.h"

#include <algorithm>
#include <array>

namespace culprit::vocab {

namespace {

// The meanings are the one-line definitions docs/vocabulary.md shows.
constexpr std::array<Word, 4> kStatuses = {{
    {status::kAttributed, "the evidence names one cause, its domain and its culprit nodes"},
    {status::kAmbiguous, "several causes fit and none is decisive; the candidates are listed"},
    {status::kUnattributed, "the attempt failed and the evidence does not show why"},
    {status::kNoFailure, "the attempt ended cleanly (COMPLETED, exit 0) and nothing failed"},
}};

constexpr std::array<Word, 4> kDomains = {{
    {domain::kHardware, "a part of a node failed: GPU, NVLink, NVSwitch, PCIe, InfiniBand adapter, host"},
    {domain::kSoftware, "the software stack failed: driver, CUDA, NCCL, the framework, the application"},
    {domain::kInfrastructure, "a shared service or its configuration failed: scheduler, fabric manager, network, filesystem, container runtime"},
    {domain::kUser, "the job's owner or its configuration ended it: cancellation, time limit, bad arguments"},
}};

constexpr std::array<Word, 5> kJobActions = {{
    {job_action::kRestart, "restart the job as it was", "Restart the job"},
    {job_action::kRestartExcluding, "restart the job without the culprit nodes", "Restart the job without"},
    {job_action::kStopFixConfig, "do not restart; fix the configuration first", "Do not resubmit the job until its configuration changes"},
    {job_action::kStopFixCode, "do not restart; fix the code first", "Do not resubmit the job until its code changes"},
    {job_action::kNone, "nothing to do for the job", "No action for the job"},
}};

constexpr std::array<Word, 6> kNodeActions = {{
    {node_action::kDrain, "take the node out of service until it is repaired", "Drain"},
    {node_action::kResetGpu, "reset the GPU (nvidia-smi -r) before the next job", "Reset the GPU of"},
    {node_action::kReboot, "reboot the node", "Reboot"},
    {node_action::kInspectLink, "check the NVLink or network link the cause names", "Inspect the links of"},
    {node_action::kReplaceSuspect, "replace the suspect part", "Replace the suspect part of"},
    {node_action::kInspect, "look at the node; the evidence alone does not justify more", "Inspect"},
}};

// Slurm's job states (slurm/slurm.h job_states and the flags sacct prints as
// states) and Kueue's eviction, sorted by name.
constexpr std::array<Word, 22> kTerminalStates = {{
    {state::kBootFail, "a node failed to boot for the job"},
    {state::kCancelled, "cancelled by its owner or an administrator"},
    {state::kCompleted, "every process ended; exit code 0 means success"},
    {"COMPLETING", "ending: processes still running on some nodes"},
    {"CONFIGURING", "nodes being configured before the job starts"},
    {state::kDeadline, "ended at its deadline"},
    {state::kEvicted, "evicted by Kueue (preemption, pods-ready timeout, requeue limit)"},
    {state::kFailed, "ended with a non-zero exit code or signal"},
    {state::kNodeFail, "ended because a node failed"},
    {state::kOutOfMemory, "a step hit its memory limit"},
    {"PENDING", "waiting for resources"},
    {state::kPreempted, "ended to make room for another job"},
    {state::kRequeued, "put back in the queue"},
    {"REQUEUE_FED", "requeued by a federation"},
    {"REQUEUE_HOLD", "requeued and held"},
    {"RESIZING", "changing size"},
    {"REVOKED", "revoked: a federation sibling started it elsewhere"},
    {"RUNNING", "running"},
    {"SPECIAL_EXIT", "requeued in a special state after a failure"},
    {"STOPPED", "stopped (SIGSTOP); resources kept"},
    {"SUSPENDED", "suspended; resources released"},
    {state::kTimeout, "ended at its time limit"},
}};

constexpr std::array<Word, 13> kEndedStates = {{
    {state::kBootFail, ""},     {state::kCancelled, ""}, {state::kCompleted, ""},   {state::kDeadline, ""},
    {state::kEvicted, ""},      {state::kFailed, ""},    {state::kNodeFail, ""},    {state::kOutOfMemory, ""},
    {state::kPreempted, ""},    {state::kRequeued, ""},        {"REVOKED", ""},           {"SPECIAL_EXIT", ""},
    {state::kTimeout, ""},
}};

constexpr std::array<Word, 6> kHardwareRoots = {{
    {"gpu", "the GPU: memory, compute, fallen off the bus, thermal"},
    {"host", "the host: CPU, memory, power"},
    {"infiniband", "an InfiniBand adapter or port"},
    {"nvlink", "an NVLink link"},
    {"nvswitch", "an NVSwitch"},
    {"pcie", "the PCIe path to a device"},
}};
constexpr std::array<Word, 9> kSoftwareRoots = {{
    {"application_exception", "the application raised an error"},
    {"cuda_error", "a CUDA call failed"},
    {"cuda_oom", "the GPU ran out of memory"},
    {"driver", "the GPU driver failed"},
    {"framework_crash", "the framework (PyTorch, ...) crashed"},
    {"host_oom", "the host ran out of memory"},
    {"nccl_bug", "a defect of NCCL itself, fixed by another NCCL release"},
    {"nccl_config", "NCCL was set up wrongly by the software stack"},
    {"numerics", "the computation diverged (NaN, inf)"},
}};
constexpr std::array<Word, 7> kInfrastructureRoots = {{
    {"container_runtime", "the container runtime failed"},
    {"fabric_manager", "Fabric Manager or IMEX failed"},
    {"filesystem", "a shared filesystem failed"},
    {"host_config", "a node is configured wrongly"},
    {"nccl_config", "the cluster's NCCL settings are wrong"},
    {"network", "the network between nodes failed"},
    {"scheduler", "the scheduler ended the job for its own reasons"},
}};
constexpr std::array<Word, 4> kUserRoots = {{
    {"application_timeout", "the job's own timeout fired"},
    {"invalid_arguments", "the job was started with wrong arguments"},
    {"nccl_config", "the job's NCCL settings are wrong"},
    {"scheduler", "the owner or the job's limits ended it (cancel, time limit)"},
}};

}  // namespace

std::span<const Word> statuses() { return kStatuses; }
std::span<const Word> domains() { return kDomains; }
std::span<const Word> job_actions() { return kJobActions; }
std::span<const Word> node_actions() { return kNodeActions; }

std::string_view action_label(std::string_view action) {
  for (auto list : {std::span<const Word>(kJobActions), std::span<const Word>(kNodeActions)})
    for (const auto& w : list)
      if (w.word == action) return w.label;
  return action;
}

std::span<const Word> terminal_states() { return kTerminalStates; }
std::span<const Word> ended_states() { return kEndedStates; }

std::span<const Word> sub_domain_roots(std::string_view d) {
  if (d == domain::kHardware) return kHardwareRoots;
  if (d == domain::kSoftware) return kSoftwareRoots;
  if (d == domain::kInfrastructure) return kInfrastructureRoots;
  if (d == domain::kUser) return kUserRoots;
  return {};
}

bool is_destructive(std::string_view a) {
  return a == node_action::kDrain || a == node_action::kResetGpu || a == node_action::kReboot ||
         a == node_action::kReplaceSuspect;
}

bool contains(std::span<const Word> list, std::string_view word) {
  return std::any_of(list.begin(), list.end(), [&](const Word& w) { return w.word == word; });
}

std::vector<std::string> words(std::span<const Word> list) {
  std::vector<std::string> out;
  out.reserve(list.size());
  for (const auto& w : list) out.emplace_back(w.word);
  return out;
}

}  // namespace culprit::vocab
