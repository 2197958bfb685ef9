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

#include <functional>
#include <optional>
#include <string_view>
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
  const std::string& node() const;
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

class World {
 public:
  virtual ~World() = default;
  // Binds each candidate of `q` (kind, relation and `within` already applied,
  // the filter not yet) into env.slots[q.bind_slot] and calls `each`, in
  // canonical order; stops early when `each` returns false.
  virtual void candidates(const ir::Query& q, Env& env, const std::function<bool()>& each) const = 0;
  virtual Value terminal(int field) const = 0;
  virtual Value outcome(int field) const = 0;
  virtual Value workload(int field) const = 0;
  virtual bool covered(const std::string& source, const std::string& node) const = 0;
  virtual double coverage(const std::string& source) const = 0;
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

}  // namespace culprit
