#include "compiler/ir.h"

namespace culprit::ir {

namespace {
int32_t find_kind(const std::vector<KindSchema>& kinds, std::string_view name) {
  for (size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i].name == name) return static_cast<int32_t>(i);
  return -1;
}
}  // namespace

int32_t Catalog::event_kind_id(std::string_view name) const { return find_kind(event_kinds, name); }
int32_t Catalog::symptom_kind_id(std::string_view name) const { return find_kind(symptom_kinds, name); }
int32_t Catalog::field_id(std::string_view name) const {
  for (size_t i = 0; i < field_names.size(); ++i)
    if (field_names[i] == name) return static_cast<int32_t>(i);
  return -1;
}

}  // namespace culprit::ir
