// How every query of a catalog is answered: its access path, chosen once,
// at compile time, from the query's shape.
//
// A query names kinds, maybe a node relation and a `within` window, and a
// filter. Evaluated naively, every call walks all candidates of its kinds,
// so a query inside another query's filter (or run once per binding of a
// rule's `for`) costs the product of the two. The planner reads the shape
// and picks, as Soufflé picks its indexes from the joins a program makes:
//
//   * an index: candidates grouped by node (`on same node`) and by the value
//     of key expressions, one for each top-level `and`-conjunct of the filter
//     of the form  CANDIDATE-EXPR == PROBE-EXPR  where one side reads only the
//     candidate (`a.device`, `coalesce(a.device, "")`, `h.at`) and the other
//     never reads it (`e.device`, a constant, `min(k: ..., k.at)`). A call
//     evaluates the probe once and walks only its bucket: O(1) lookup plus
//     the bucket, instead of every candidate. Every bucket is kept in the
//     query's order (canonical order for events; `first`, then id, for
//     symptoms), so a `within` window is a binary search inside it and the
//     order of results never depends on the index.
//   * an infix index for a conjunct  contains(CANDIDATE-EXPR, "P" + PROBE-EXPR
//     + "S")  with constant, non-empty P and S (see KeyPart): the bucket of
//     the probe's value holds every candidate that can contain it.
//   * a priority range for a symptom query with a conjunct
//     CANDIDATE.priority OP PROBE  (OP one of < <= > >=, an integer PROBE that
//     never reads the candidate; either side may come first): the bucket keeps
//     a second copy ordered by priority, so a call finds the candidates in
//     range by binary search instead of walking the bucket. The cascade and
//     priority rules demote `symptom *` below a winner's priority once per
//     winner; with thousands of equal winners each walk was every symptom.
//   * the first hit for exists()/none(): the walk stops at the first candidate
//     that passes the filter.
//   * memoization for a closed query expression (one that reads no binding
//     from outside, no group, no capture): its value depends only on the
//     events and symptoms of its kinds (and the outcome, if it reads it), so
//     it is computed once and reused until one of those changes: once per
//     rule in practice, not once per outer binding.
//   * memoization by parameters for a query expression that reads bindings
//     from outside only through their fields (`e.network`, `e.peer`) and
//     nodes (`on same node`), not through a `within` anchor: its value is a
//     function of those values and of its inputs, so it is kept per distinct
//     tuple of them. A rule whose thousands of events share a handful of
//     values (every rank's `nccl.setup` names one of two networks) computes
//     each value once, not once per event.
//
// The filter is still evaluated, in full, on every candidate an index
// yields, so an index only ever narrows the candidates to a superset of the
// matches: results are identical with and without it (tests/runtime/
// query_index_test.cpp holds the engine to that on random catalogs).
//
// Plans are pure functions of the IR; CatalogPlans is immutable and may be
// shared by any number of threads.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/diagnostics.h"
#include "compiler/ir.h"

namespace culprit::plan {

// One conjunct of a filter used as an index key: an equality
//   CANDIDATE-EXPR == PROBE-EXPR
// or (`infix`, event queries only) a containment with constant delimiters
//   contains(CANDIDATE-EXPR, "P" + PROBE-EXPR + "S")      (P, S non-empty)
// A candidate string c contains P + x + S exactly when x is one of the
// finitely many infixes of c that follow an occurrence of P and precede an
// occurrence of S, so the candidate is filed under every such x (a handful
// for `contains(i.list, ":" + e.peer + "<")`: one per listed address) and a
// call looks up the probe's value, as for an equality.
struct KeyPart {
  const ir::Expr* candidate = nullptr;  // reads only the candidate: evaluated once per candidate, to file it
  const ir::Expr* probe = nullptr;      // never reads the candidate: evaluated once per call, to look up
  bool infix = false;
  std::string prefix, suffix;           // (infix) P and S
};

// (symptom queries) A conjunct  CANDIDATE.priority OP PROBE  of the filter,
// normalised so that the candidate is on the left.
struct PriorityRange {
  ir::Op op = ir::Op::Lt;               // Lt, Le, Gt or Ge: candidate.priority OP probe
  const ir::Expr* probe = nullptr;      // an Int that never reads the candidate: evaluated once per call
};

struct QueryPlan {
  const ir::Rule* rule = nullptr;
  const ir::Query* query = nullptr;
  const ir::Expr* expr = nullptr;      // the exists/none/count/nodes/max/min expression; null for a `for` or action query
  std::string role;                    // "for", "query", "demote", "scrub"
  bool by_node = false;                // `on same node`: the bucket of the `for` binding's node
  std::vector<KeyPart> keys;           // empty: no key (all candidates of the kinds, or of the node)
  bool time_window = false;            // `within`: binary search on time inside the bucket
  // (symptom queries) the first priority conjunct, if any; unused with a
  // `within` (the time window narrows first).
  std::optional<PriorityRange> priority_range;
  bool first_hit = false;              // exists()/none(): stop at the first candidate that passes
  bool memoized = false;               // computed once (per parameter tuple) while its inputs do not change
  // (memoized) the outer reads its value depends on, deduplicated: field
  // reads of bindings from outside, and the bindings whose node a nested
  // query's `on same/other node` compares with. Both empty: closed.
  std::vector<const ir::Expr*> params;
  std::vector<int32_t> param_node_slots;
  bool reads_outcome = false;          // (memoized) its value depends on the outcome record too
  std::vector<int32_t> event_inputs;   // (memoized) event kinds its value depends on, sorted, unique
  std::vector<int32_t> symptom_inputs; // (memoized) symptom kinds its value depends on, sorted, unique
  // Queries with the same signature share one index at run time (same
  // source, kinds, node grouping and candidate-side key expressions).
  std::string index_signature;
  // Plans with equal signatures have equal ids: 0 .. index_count()-1, in
  // order of first appearance (an executor keeps one index per id).
  int32_t index_id = 0;
};

class CatalogPlans {
 public:
  const std::vector<QueryPlan>& plans() const { return plans_; }
  // How many distinct index signatures the plans have (QueryPlan::index_id).
  size_t index_count() const { return index_count_; }
  // The plan of a query of this catalog (for_query, Rule::queries, Action::query), or null.
  const QueryPlan* find(const ir::Query* q) const;
  // The key expressions of every plan, candidate and probe sides, and the
  // probes of priority ranges, in plan order: top-level expressions of
  // their own (the JIT compiles them).
  std::vector<const ir::Expr*> key_expressions() const;

 private:
  friend CatalogPlans plan_catalog(const ir::Catalog& catalog);
  std::vector<QueryPlan> plans_;
  std::vector<std::pair<const ir::Query*, size_t>> by_address_;  // sorted by address
  size_t index_count_ = 0;
};

// Plans every query of `catalog` (which must outlive the result).
CatalogPlans plan_catalog(const ir::Catalog& catalog);

// Warns (E0801, at the inner query) for every query over events that no
// plan narrows (no key, no node grouping, no `within`, not closed) inside
// the filter of another such query, or in the `where` of a rule whose `for`
// is one: each outer candidate then walks every inner candidate, a product
// that reaches the evaluation budget (limits::eval_steps_for) on a few
// thousand events. `plans` are those of `catalog`. Rules for which `skip`
// (when set) is true are passed over: `culprit check` skips the bundled
// catalog's, whose cost is measured on the examples against that budget.
void warn_unindexed_nesting(const ir::Catalog& catalog, const CatalogPlans& plans, Diagnostics& diags,
                            const std::function<bool(const ir::Rule&)>& skip = {});

// One line about how `p` is answered, e.g.
//   index (kind, node, key a.event, coalesce(a.device, "")); stops at the first hit
std::string describe(const QueryPlan& p, const ir::Catalog& catalog);

// The kinds of a query as a pattern: one kind, `*`, a family `nccl.*`, or a list.
std::string kinds_text(const ir::Query& q, const ir::Catalog& catalog);

// The source text of an expression (from its SourceRange), or a compact
// rendering of the IR when the range is unknown.
std::string expression_text(const ir::Expr& e, const ir::Catalog& catalog);

}  // namespace culprit::plan
