// Slurm hostlists: "gpu[001-004,010],login1" <-> a list of host names.
//
// The syntax Slurm prints in sacct/squeue NodeList and accepts in configs:
// comma-separated items, each a name with zero or more bracketed range
// groups; a range "a-b" keeps the zero padding of its lower bound
// ("[08-10]" is 08, 09, 10). Several groups multiply ("r[1-2]n[1-2]" is
// r1n1, r1n2, r2n1, r2n2). "None assigned" and "(null)" (jobs that never ran)
// are the empty list.
//
// Pure functions, thread-safe, no exceptions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace culprit::blueprint {

// Expands `list` into host names in the order written (duplicates kept).
// False with `error` on malformed input (unbalanced brackets, a reversed or
// non-numeric range) or when the expansion would exceed `max_hosts`.
bool expand_hostlist(std::string_view list, std::vector<std::string>& out, std::string& error,
                     size_t max_hosts = 1u << 20);

}  // namespace culprit::blueprint
