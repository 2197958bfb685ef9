#include "blueprint/node_names.h"

#include <fmt/format.h>

#include "base/limits.h"
#include "base/text_util.h"
#include "runtime/bundle.h"

namespace culprit::blueprint {

std::string node_list_problem(const std::vector<std::string>& nodes) {
  if (nodes.size() > limits::kContextNodes)
    return limits::exceeded("context_nodes", limits::kContextNodes, fmt::format("the attempt has {} nodes", nodes.size()));
  for (const auto& n : nodes) {
    if (valid_host_name(n)) continue;
    // The name is input: quote a bounded, printable part of it.
    std::string shown = escape_for_terminal(truncate_utf8(n, 64));
    return fmt::format("invalid node name '{}'{} (a node name is a host name: letters, digits, '-', '.', '_', "
                       "at most 253 characters, not starting with '-' or '.')",
                       shown, n.size() > 64 ? fmt::format(" ({} bytes)", n.size()) : "");
  }
  return "";
}

}  // namespace culprit::blueprint
