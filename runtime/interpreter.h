// The reference executor of the IR: evaluates typed expressions.
//
// The interpreter is the oracle for every other executor: any executor of
// ir::Expr must produce the values this one produces. Evaluation never
// throws and never fails: type errors were ruled out by semantic analysis,
// and runtime surprises (a field absent from one kind, an unparsable number,
// a shift out of range) yield null as docs/language.md §6 specifies.
//
// Evaluation reads the world (events, symptoms, terminal state, coverage)
// through the World interface, so the interpreter does not depend on how the
// engine stores things. An Env is per evaluation and per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "compiler/ir.h"
#include "runtime/model.h"

namespace re2 { class RE2; }

namespace culprit {

struct Item {
  const Event* event = nullptr;
  const Symptom* symptom = nullptr;
  std::optional<int64_t> time() const {
    return event ? event->ts() : symptom ? symptom->first : std::nullopt;
  }
  // The event's host or the symptom's node; "" for neither. Inline: the
  // engine asks for it for every candidate of a node-grouped query.
  std::string_view node() const {
    return event ? event->host.view() : symptom ? std::string_view(symptom->node) : std::string_view();
  }
};

struct Env;

// Native code for some expressions of a catalog (the JIT evaluator). The
// engine asks it first for every top-level expression (rule conditions,
// query filters, field and action values); `run` returns false for an
// expression it did not compile, which is then interpreted. Implementations
// are immutable and shared by all threads.
class NativeCode {
 public:
  virtual ~NativeCode() = default;
  virtual bool run(const ir::Expr& e, Env& env, Value& out) const = 0;
};

// A borrowed `bool()` callable: a pointer to it and a trampoline, so passing
// one allocates nothing (std::function may). Valid while the call lasts.
class CandidateVisitor {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, CandidateVisitor>>>
  CandidateVisitor(F& f) : ctx_(&f), fn_([](void* c) { return static_cast<bool>((*static_cast<F*>(c))()); }) {}  // NOLINT: implicit on purpose
  bool operator()() const { return fn_(ctx_); }

 private:
  void* ctx_;
  bool (*fn_)(void*);
};

class World {
 public:
  virtual ~World() = default;
  // Binds each candidate of `q` (kind, relation and `within` already applied,
  // the filter not yet) into env.slots[q.bind_slot] and calls `each`, in
  // canonical order (events: canonical order; symptoms: `first`, then id);
  // stops early when `each` returns false. A World may hand out only a
  // superset of the candidates that pass the filter (an index, see
  // compiler/query_plan.h): the caller applies the filter to each.
  virtual void candidates(const ir::Query& q, Env& env, CandidateVisitor each) const = 0;
  // The value of a memoized query expression (closed, or kept per value of
  // the outer fields it reads; compiler/query_plan.h) may be kept while the
  // events and symptoms it reads do not change. recall() returns the kept
  // value for the bindings in `env`, or null; it sets `*keep` when the World
  // keeps values for `q`, and the caller then hands the value it computes,
  // with `env` as it was for recall(), to remember(). Both are optional for a
  // World. The returned value lives until the next call on this World.
  virtual const Value* recall(const ir::Query& /*q*/, Env& /*env*/, bool* keep) const {
    *keep = false;
    return nullptr;
  }
  virtual void remember(const ir::Query& /*q*/, Env& /*env*/, const Value& /*v*/) const {}
  virtual Value terminal(int field) const = 0;
  virtual Value outcome(int field) const = 0;
  virtual Value workload(int field) const = 0;
  // The same value, kept by the World for the whole run (null: call
  // workload()). Lets compiled code read workload.node_names, which can be
  // tens of kilobytes, without a copy per evaluation.
  virtual const Value* workload_ref(int /*field*/) const { return nullptr; }
  virtual bool covered(const std::string& source, const std::string& node) const = 0;
  // Whether `name` is one of the workload's nodes (is_node()).
  virtual bool is_node(std::string_view name) const = 0;
  // The workload node the context's ranks layout puts global rank `rank` on
  // (rank_node()); "" when it places no such rank. The view lives as long
  // as the World.
  virtual std::string_view rank_node(int64_t /*rank*/) const { return {}; }
  // The workload node a host name of the evidence stands for: the node
  // itself, an alias the context gives it (an IP address), its FQDN or short
  // name (runtime/bundle.h canonical_host); "" when none (host_node()). The
  // view lives as long as the World.
  virtual std::string_view host_node(std::string_view host) const { return is_node(host) ? host : std::string_view(); }
  virtual double coverage(const std::string& source) const = 0;
  // True once the attribution has spent its evaluation budget (limits::
  // eval_steps_for): a query then answers at once, as if nothing matched,
  // and the engine discards the run as incomplete. Executors check it before
  // they ask for candidates, so nested queries unwind without work. A World
  // that counts steps sets exhausted_ (see step_budget_spent()).
  bool out_of_budget() const { return exhausted_; }

  // Native code runs an expression first and, when it bails out, the
  // interpreter runs the whole expression again (runtime/native_code.h).
  // The budget must count that expression once, exactly as the interpreter
  // alone would, or the same evidence could be attributed by one engine and
  // cut short by the other. So an executor that may be undone brackets its
  // run: begin_attempt() before, end_attempt(mark, bailed) after. A bailed
  // attempt gives back the steps it took and forgets the values it
  // memoized (remember()); attempts nest (a filter inside a query).
  struct Attempt {
    uint64_t steps;
    size_t undo;
    bool exhausted;
  };
  Attempt begin_attempt() const {
    ++attempts_open_;
    return {steps_, undo_count_, exhausted_};
  }
  void end_attempt(const Attempt& a, bool bailed) const {
    --attempts_open_;
    if (bailed) {
      steps_ = a.steps;
      exhausted_ = a.exhausted;
      if (undo_count_ > a.undo) undo_memos(a.undo);
    } else if (attempts_open_ == 0 && undo_count_ > 0) {
      undo_memos(SIZE_MAX);  // nothing can be undone any more: drop the log
    }
  }

 protected:
  // Steps taken, and whether the budget is spent; Worlds that count steps
  // keep them here so that attempts can restore them.
  mutable uint64_t steps_ = 0;
  mutable bool exhausted_ = false;
  // Native attempts open now, and entries of the World's undo log of
  // remember() calls made while one was (undo_memos() keeps it).
  mutable unsigned attempts_open_ = 0;
  mutable size_t undo_count_ = 0;
  // Undoes the memos remembered after the first `keep` entries of the log
  // and truncates it to `keep`; SIZE_MAX: clears the log, undoing nothing.
  virtual void undo_memos(size_t /*keep*/) const { undo_count_ = 0; }
};

struct Env {
  const ir::Catalog* catalog = nullptr;
  const std::vector<std::unique_ptr<re2::RE2>>* regexes = nullptr;  // Catalog::regexes, compiled
  const ir::Rule* rule = nullptr;             // owner of Op::Query* indices
  const World* world = nullptr;
  std::vector<Item> slots;
  const std::vector<std::optional<std::string_view>>* captures = nullptr;  // extractor emit
  const std::vector<Item>* group = nullptr;   // group aggregates
  const NativeCode* native = nullptr;         // when set, tried before interpreting
};

// Interprets `e` (the reference semantics).
Value evaluate(const ir::Expr& e, Env& env);

// Evaluates a top-level expression: native code when env.native has it,
// the interpreter otherwise. Both must give the same value.
Value run_expression(const ir::Expr& e, Env& env);
// The same into `out`, reusing its string's storage (no allocation when the
// result fits: the index probes of the engine call this once per query).
void run_expression_into(const ir::Expr& e, Env& env, Value& out);

// True when the candidate bound at q.bind_slot passes q's filter.
bool passes_filter(const ir::Query& q, Env& env);

// Time and node relation tests shared by every World implementation.
bool within_window(const ir::Query& q, const Env& env, std::optional<int64_t> candidate_time);

// The interpreter's own ordering and number parsing, shared with the native
// code helpers (runtime/native_code.cpp) so both executors agree by
// construction: compare_values is the three-way order of comparisons and
// max/min; parse_integer_text is int()/hex() (base 10/16) of a string;
// parse_real_text is float() of a string (finite values only).
int compare_values(const Value& a, const Value& b);
// time(): the instant an ISO 8601 / RFC 3339 text starts with (zone optional,
// UTC without), shared with the native code helpers like the two below.
std::optional<int64_t> parse_time_text(std::string_view s);
// The hidden fields of the temporal order construct (ir::kEvOwnTs, kEvPlace):
// whether an event's ts is its own line's (not inherited), and its file.
bool own_event_time(const Event& ev);
std::string event_place(const Event& ev);

std::optional<int64_t> parse_integer_text(std::string_view s, int base);
std::optional<double> parse_real_text(std::string_view s);

// Counts distinct node names without allocating for the usual handful
// (nodes() of a query): the first kInline are kept inline, the rest spill.
// The strings must outlive the counter (they are the items' own).
class DistinctNodes {
 public:
  void add(std::string_view node);
  size_t count();

 private:
  static constexpr size_t kInline = 16;
  std::string_view inline_[kInline];
  size_t n_ = 0;
  std::vector<std::string_view> spill_;
};

}  // namespace culprit
