// One YAML document, for the blueprint's two YAML readers: the
// configuration (config.cpp) and the recovery policy (recovery_policy.cpp).
// yaml-cpp is used by these three files only; this header is theirs.
//
// load_yaml_document() turns text into a yaml-cpp node tree, refusing first,
// each as an error diagnostic with `file:line:col`, what the readers would
// otherwise crash on, recurse on without bound, or misread in silence:
//
//   * a byte-order mark (U+FEFF) at the start;
//   * a tab in a line's indentation (YAML indents with spaces);
//   * a second document (`---`): yaml-cpp's Load would keep the first and
//     drop the rest without a word;
//   * anchors and aliases (`&name`, `*name`): one value used in many places
//     (the readers would walk it as many times, and a merge key `<<` built
//     on an alias would not merge); write the values out;
//   * mappings and sequences nested deeper than limits::kConfigDepth. The
//     depth is counted while yaml-cpp streams the document's events and the
//     stream is stopped there, so yaml-cpp (which parses recursively) never
//     goes deeper; only then is the node tree built;
//   * anything yaml-cpp itself refuses (its message and mark).
//
// Repeated keys and merge keys (`<<`) are the readers' to refuse: they walk
// every mapping's keys. No exception leaves load_yaml_document().
//
// Returns false when there was an error (the diagnostics carry `code`); an
// empty document (nothing, or only comments) is `root` null and true.
// Thread-safety: none needed (no shared state).
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>

#include "compiler/diagnostics.h"

namespace culprit::blueprint {

bool load_yaml_document(const std::shared_ptr<const SourceFile>& file, const char* code, Diagnostics& diags,
                        YAML::Node& root);

}  // namespace culprit::blueprint
