// The scheduler terminal states Culprit knows (base/vocabulary.h): Slurm's job states (the
// JOB_STATE names sacct and scontrol print, upper case). A context's
// terminal.state and a scenario's `terminal` are checked against this list,
// because the outcome logic reads the state: only COMPLETED (with exit 0)
// counts as a clean end, so a misspelt "COMPLETD" would silently turn a
// clean run into "unattributed".
//
// Thread-safety: immutable data. No exceptions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace culprit {

// Sorted.
const std::vector<std::string>& known_terminal_states();

bool is_known_terminal_state(std::string_view state);

}  // namespace culprit
