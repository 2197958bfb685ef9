#include "runtime/evidence_set.h"

#include <fmt/format.h>

#include <iterator>

namespace culprit {

namespace {

template <class T>
void append(std::vector<T>& to, std::vector<T>&& from) {
  if (to.empty()) {
    to = std::move(from);
    return;
  }
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

}  // namespace

void EvidenceSet::merge(EvidenceSet&& o) {
  append(files, std::move(o.files));
  append(observations, std::move(o.observations));
  append(ignored_files, std::move(o.ignored_files));
  append(refused_files, std::move(o.refused_files));
  append(warnings, std::move(o.warnings));
  append(collectors, std::move(o.collectors));
  // Collectors read their observation files into `observations`; only a
  // bundle names one. Two would be a caller's mistake: keep it visible.
  if (!o.observations_path.empty()) {
    if (observations_path.empty())
      observations_path = std::move(o.observations_path);
    else
      warnings.push_back(fmt::format("{} not read: the evidence already has an observations file ({})",
                                     o.observations_path, observations_path));
  }
}

}  // namespace culprit
