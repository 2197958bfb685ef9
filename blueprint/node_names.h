// The context's rules for an attempt's node list, applied where the
// blueprint builds an attempt (static workloads of the config, sacct's
// NodeList) so `culprit run` accepts exactly the nodes a context.json would
// (runtime/bundle.h): each a host name by valid_host_name (RFC 1123 labels
// plus '.' and '_', at most 253 characters) and at most
// limits::kContextNodes of them.
//
// A node name is also a file-name component ({node} in a path template), an
// scontrol argument and a key of the fault history, so a name that breaks
// the rule is never passed on: the config reading it is an error, a sacct
// record with it is skipped with a warning.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

namespace culprit::blueprint {

// "" when `nodes` keeps the rules; else one sentence saying which rule it
// breaks and, for a bad name, which (quoted, control characters escaped,
// long names shortened).
std::string node_list_problem(const std::vector<std::string>& nodes);

}  // namespace culprit::blueprint
