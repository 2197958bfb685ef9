// What `culprit lsp` knows about one compiled catalog: for every event and
// symptom kind, where it is made and where it is read; for every extractor,
// where it is declared. Hover and go-to-definition are answered from it.
//
//   event kind     made by the extractors that emit it (their name) and the
//                  rules whose `emit` action does (that action); read by
//                  the rules with a query over it (`for`, an expression
//                  query, a demote/scrub query)
//   symptom kind   made by the rules whose `symptom` action creates it;
//                  read by the rules with a query over symptoms of it
//   extractor      its declaration (the name), sources, regex and kind
//
// A name is looked up as written at the cursor (lsp_text.h word_at): a
// word that names a kind or an extractor of the catalog is answered
// wherever it appears; any other word (a field, a binding, a kind pattern)
// has no answer.
//
// Ownership: an index shares its catalog (and through it the source files
// its ranges point into), so its answers stay valid as long as it lives.
// Immutable once built; any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir.h"

namespace culprit::cli::lsp {

class CatalogIndex {
 public:
  explicit CatalogIndex(std::shared_ptr<const ir::Catalog> catalog);

  // Markdown describing what `word` names; "" when it names nothing.
  std::string hover(std::string_view word) const;

  // The places `word` is defined: a kind's makers (as listed above), an
  // extractor's declaration. Empty when it names nothing.
  std::vector<SourceRange> definition(std::string_view word) const;

  const ir::Catalog& catalog() const { return *catalog_; }

  struct Use {
    std::string what;  // "extractor `GpuXid`", "rule `FallenOffBus`"
    SourceRange where;
  };
  struct KindUses {
    std::vector<Use> made, read;
  };

 private:
  std::shared_ptr<const ir::Catalog> catalog_;
  std::vector<KindUses> events_, symptoms_;  // by kind id
};

}  // namespace culprit::cli::lsp
