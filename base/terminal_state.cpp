#include "base/terminal_state.h"

#include <algorithm>

namespace culprit {

const std::vector<std::string>& known_terminal_states() {
  // Slurm job states (slurm/slurm.h job_states and the flags sacct prints
  // as states), sorted. Running and pending states are listed because a
  // context may be written before the job ended.
  static const std::vector<std::string> states = {
      "BOOT_FAIL", "CANCELLED", "COMPLETED", "COMPLETING", "CONFIGURING", "DEADLINE", "FAILED", "NODE_FAIL",
      "OUT_OF_MEMORY", "PENDING", "PREEMPTED", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESIZING", "REVOKED",
      "RUNNING", "SPECIAL_EXIT", "STOPPED", "SUSPENDED", "TIMEOUT"};
  return states;
}

bool is_known_terminal_state(std::string_view state) {
  const auto& s = known_terminal_states();
  return std::binary_search(s.begin(), s.end(), state);
}

}  // namespace culprit
