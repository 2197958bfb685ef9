// Interpreter tests: the reference semantics of expressions (docs/language.md
// §6). Each expression is compiled inside a tiny catalog, as a symptom field
// of a rule bound to one app.err event, and evaluated with runtime/interpreter.h
// against an event built here. A small World stands in for the engine where
// queries, terminal state and coverage are involved.
#include "runtime/interpreter.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "tests/support/test_support.h"

using namespace culprit;
using culprit::testing::kErrExtractor;
using culprit::testing::program_for;

namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kT0 = 1767261600000000000;  // 2026-01-01T10:00:00Z
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// A stand-in for the engine: a fixed list of events, a terminal state and
// coverage. It applies kind, node relation and `within` as World promises
// (the interpreter applies the filter and does the aggregation).
class FakeWorld : public World {
 public:
  std::vector<const Event*> events;
  TerminalState terminal_state;
  Outcome outcome_value;
  std::vector<std::string> nodes;
  std::string workload_id = "job-1";
  std::set<std::pair<std::string, std::string>> covered_pairs;  // (source, node)

  void candidates(const ir::Query& q, Env& env, CandidateVisitor each) const override {
    for (const Event* e : events) {
      if (std::find(q.kinds.begin(), q.kinds.end(), e->kind) == q.kinds.end()) continue;
      if (q.relation != ir::NodeRelation::Any) {
        bool same = env.slots[static_cast<size_t>(q.relation_slot)].node() == e->host;
        if (same != (q.relation == ir::NodeRelation::Same)) continue;
      }
      if (!within_window(q, env, e->ts())) continue;
      env.slots[static_cast<size_t>(q.bind_slot)] = Item{e, nullptr};
      if (!each()) return;
    }
  }
  Value terminal(int field) const override {
    if (field == 0) return terminal_state.state.empty() ? Value::null() : Value::string(terminal_state.state);
    return terminal_state.exit_code ? Value::integer(*terminal_state.exit_code) : Value::null();
  }
  Value outcome(int field) const override {
    if (field == 0) return Value::string(outcome_value.status);
    if (field == 1) return Value::string(outcome_value.domain);
    if (field == 2) return Value::string(outcome_value.sub_domain);
    if (field == 3) return Value::integer(static_cast<int64_t>(outcome_value.culprit_nodes.size()));
    return Value::string(outcome_value.basis);
  }
  Value workload(int field) const override {
    return field == 0 ? Value::integer(static_cast<int64_t>(nodes.size())) : Value::string(workload_id);
  }
  bool covered(const std::string& source, const std::string& node) const override {
    return covered_pairs.count({source, node}) > 0;
  }
  double coverage(const std::string& source) const override {
    if (nodes.empty()) return 0;
    double n = 0;
    for (const auto& node : nodes) n += covered_pairs.count({source, node});
    return n / static_cast<double>(nodes.size());
  }
  bool is_node(std::string_view name) const override { return std::find(nodes.begin(), nodes.end(), name) != nodes.end(); }
};

// Compiles EXPR as `v` of a symptom in a rule over app.err (or in post_outcome
// when the expression reads `outcome`) and evaluates it.
class Eval {
 public:
  // The event bound to `e`: code 5, dev "a", fatal false on node-01 at kT0.
  Event event;
  FakeWorld world;
  bool use_world = false;

  Eval() {
    program_ = program_for(kErrExtractor);  // only to learn the kind id below
    event = make_event("node-01", kT0, 5, Value::string("a"), Value::boolean(false));
  }

  Event make_event(const std::string& host, std::optional<int64_t> ts, int64_t code, Value dev, Value fatal) const {
    const auto& cat = program_->catalog();
    Event ev;
    ev.kind = cat.event_kind_id("app.err");
    ev.host = host;
    ev.where.host = host;
    ev.where.source = "app";
    ev.where.file = "logs/" + host + "/app.log";
    ev.where.line = 7;
    ev.where.offset = 120;
    ev.where.ts = ts;
    ev.where.text = "ERR " + std::to_string(code);
    const auto& schema = cat.event_kinds[static_cast<size_t>(ev.kind)];
    ev.fields.assign(schema.fields.size(), Value::null());
    ev.fields[static_cast<size_t>(schema.slot(cat.field_id("code")))] = Value::integer(code);
    ev.fields[static_cast<size_t>(schema.slot(cat.field_id("dev")))] = std::move(dev);
    ev.fields[static_cast<size_t>(schema.slot(cat.field_id("fatal")))] = std::move(fatal);
    return ev;
  }

  Value operator()(const std::string& expr) {
    // `outcome` is only known in post_outcome, where no action takes a free
    // expression; there the expression is compiled as the `for` query's filter.
    const bool post = expr.find("outcome.") != std::string::npos;
    const std::string text =
        std::string(kErrExtractor) +
        (post ? "rule T stage post_outcome {\n  for e: event app.err\n  where " + expr +
                    "\n  set outcome unattributed because \"x\"\n}\n"
              : "rule T stage symptoms {\n  for e: event app.err\n  symptom t.x { v: " + expr + " }\n}\n");
    auto program = program_for(text);
    const auto& cat = program->catalog();
    REQUIRE(cat.rules.size() == 1);
    const ir::Rule& r = cat.rules[0];
    const ir::Expr& e = post ? *r.for_query->filter : r.actions[0].fields[0].value;
    // `event` was built against kErrExtractor alone; every catalog here starts
    // with the same extractor, so the kind id and field slots are the same.
    Env env;
    env.catalog = &cat;
    env.regexes = &program->expression_regexes();
    env.rule = &r;
    env.world = use_world ? &world : nullptr;
    env.slots.resize(static_cast<size_t>(std::max(1, r.slot_count)));
    env.slots[0] = Item{&event, nullptr};
    return evaluate(e, env);
  }

 private:
  std::shared_ptr<const Program> program_;
};

bool is_null(const Value& v) { return v.type == Type::Null; }
bool is_int(const Value& v, int64_t i) { return v.type == Type::Int && v.i == i; }
bool is_bool(const Value& v, bool b) { return v.type == Type::Bool && v.b == b; }
bool is_str(const Value& v, const std::string& s) { return v.type == Type::String && v.s == s; }
bool is_float(const Value& v, double f) { return v.type == Type::Float && std::fabs(v.f - f) < 1e-9; }
bool is_dur(const Value& v, int64_t ns) { return v.type == Type::Duration && v.i == ns; }
bool is_time(const Value& v, int64_t ns) { return v.type == Type::Time && v.i == ns; }

}  // namespace

TEST_CASE("int(): decimal text to int, null when it does not parse") {
  Eval eval;
  CHECK(is_int(eval("int(\"42\")"), 42));
  CHECK(is_int(eval("int(\"-17\")"), -17));
  CHECK(is_int(eval("int(\"+5\")"), 5));
  CHECK(is_int(eval("int(\"007\")"), 7));
  CHECK(is_int(eval("int(\"0\")"), 0));
  CHECK(is_int(eval("int(\"9223372036854775807\")"), kMax));
  CHECK(is_int(eval("int(42)"), 42));
  for (const char* bad : {"", "x", "4x2", "1.5", "0x10", "--1", "9223372036854775808", "99999999999999999999", "1 2"}) {
    CAPTURE(bad);
    CHECK(is_null(eval(std::string("int(\"") + bad + "\")")));
  }
  // A capture that did not take part in the match is null, and so is int() of it.
  eval.event = eval.make_event("node-01", kT0, 5, Value::null(), Value::null());
  CHECK(is_null(eval("int(e.dev)")));
}

// Regression: int() rejects the smallest int64: the magnitude is parsed as an
// unsigned number and refused when above INT64_MAX before the sign is applied
// (runtime/interpreter.cpp parse_int_text). Repro: `int("-9223372036854775808")`
// evaluates to null instead of -9223372036854775808.
TEST_CASE("int(): the smallest int64 parses") {
  Eval eval;
  CHECK(is_int(eval("int(\"-9223372036854775808\")"), kMin));
}

TEST_CASE("hex(): hexadecimal text, with or without 0x, to int") {
  Eval eval;
  CHECK(is_int(eval("hex(\"0x3F\")"), 63));
  CHECK(is_int(eval("hex(\"3f\")"), 63));
  CHECK(is_int(eval("hex(\"3F\")"), 63));
  CHECK(is_int(eval("hex(\"0XfF\")"), 255));
  CHECK(is_int(eval("hex(\"00000010\")"), 16));
  // Register words use all 64 bits.
  CHECK(is_int(eval("hex(\"FFFFFFFFFFFFFFFF\")"), -1));
  CHECK(is_int(eval("hex(\"0x8000000000000000\")"), kMin));
  CHECK(is_int(eval("hex(255)"), 255));
  for (const char* bad : {"", "0x", "xyz", "0xg1", "1 2", "10000000000000000"}) {
    CAPTURE(bad);
    CHECK(is_null(eval(std::string("hex(\"") + bad + "\")")));
  }
}

TEST_CASE("float(): floating text to float, null when it does not parse") {
  Eval eval;
  CHECK(is_float(eval("float(\"1.5\")"), 1.5));
  CHECK(is_float(eval("float(\"-2.25\")"), -2.25));
  CHECK(is_float(eval("float(\"1e3\")"), 1000.0));
  CHECK(is_float(eval("float(\"7\")"), 7.0));
  CHECK(is_float(eval("float(3)"), 3.0));
  CHECK(is_float(eval("float(2.5)"), 2.5));
  for (const char* bad : {"", "abc", "1.5x", "nan", "inf", "1e999"}) {
    CAPTURE(bad);
    CHECK(is_null(eval(std::string("float(\"") + bad + "\")")));
  }
}

TEST_CASE("duration(): a count of a unit as a duration") {
  Eval eval;
  CHECK(is_dur(eval("duration(5, \"s\")"), 5 * kSec));
  CHECK(is_dur(eval("duration(250, \"ms\")"), 250'000'000));
  CHECK(is_dur(eval("duration(3, \"h\")"), 3 * 3600 * kSec));
  CHECK(is_dur(eval("duration(2, \"m\")"), 120 * kSec));
  CHECK(is_dur(eval("duration(7, \"us\")"), 7000));
  CHECK(is_dur(eval("duration(9, \"ns\")"), 9));
  CHECK(is_dur(eval("duration(0, \"s\")"), 0));
  CHECK(is_dur(eval("duration(e.code, \"ms\")"), 5'000'000));
  CHECK(is_dur(eval("duration(1.5, \"s\")"), 1'500'000'000));
  CHECK(is_dur(eval("duration(\"2\", \"m\")"), 120 * kSec));
  CHECK(is_null(eval("duration(\"soon\", \"s\")")));
  CHECK(is_null(eval("duration(int(\"x\"), \"s\")")));
  // Far beyond the int64 range of nanoseconds.
  CHECK(is_null(eval("duration(9223372036854775807, \"h\")")));
}

TEST_CASE("seconds(): a duration as float seconds") {
  Eval eval;
  CHECK(is_float(eval("seconds(1500ms)"), 1.5));
  CHECK(is_float(eval("seconds(-2s)"), -2.0));
  CHECK(is_float(eval("seconds(0s)"), 0.0));
  CHECK(is_float(eval("seconds(e.ts - (e.ts - 90s))"), 90.0));
  CHECK(is_null(eval("seconds(duration(int(\"x\"), \"s\"))")));
}

TEST_CASE("arithmetic: ints, floats, strings") {
  Eval eval;
  CHECK(is_int(eval("1 + 2 * 3"), 7));
  CHECK(is_int(eval("10 - 3 - 2"), 5));
  CHECK(is_int(eval("e.code * e.code"), 25));
  CHECK(is_int(eval("17 % 5"), 2));
  CHECK(is_float(eval("1.5 + 1"), 2.5));
  CHECK(is_float(eval("2 * 1.25"), 2.5));
  CHECK(is_float(eval("1 - 0.5"), 0.5));
  CHECK(is_str(eval("\"ab\" + \"cd\""), "abcd"));
  CHECK(is_str(eval("e.dev + \"-\" + e.node"), "a-node-01"));
  CHECK(is_int(eval("-e.code"), -5));
  CHECK(is_int(eval("0x3F & 0x0F | 0x100"), 0x10F));
  CHECK(is_int(eval("0xFF ^ 0x0F"), 0xF0));
  // Bit operators before comparisons: (5 & 4) == 4.
  CHECK(is_bool(eval("e.code & 4 == 4"), true));
  CHECK(is_int(eval("1 << 2 + 1"), 8));
}

TEST_CASE("arithmetic: int overflow wraps (two's complement)") {
  Eval eval;
  CHECK(is_int(eval("9223372036854775807 + 1"), kMin));
  CHECK(is_int(eval("-9223372036854775807 - 2"), kMax));
  CHECK(is_int(eval("4611686018427387904 * 2"), kMin));
  CHECK(is_int(eval("0x4000000000000000 * 4"), 0));
  CHECK(is_int(eval("9223372036854775807 * 9223372036854775807"), 1));
  // Negation of the smallest int wraps to itself.
  eval.event = eval.make_event("node-01", kT0, kMin, Value::string("a"), Value::boolean(false));
  CHECK(is_int(eval("-e.code"), kMin));
  CHECK(is_int(eval("e.code - 1"), kMax));
}

TEST_CASE("arithmetic: modulo by zero is null") {
  Eval eval;
  CHECK(is_null(eval("7 % 0")));
  CHECK(is_null(eval("e.code % (e.code - 5)")));
}

TEST_CASE("shifts: counts 0..63, anything else is null") {
  Eval eval;
  CHECK(is_int(eval("1 << 0"), 1));
  CHECK(is_int(eval("1 << 10"), 1024));
  CHECK(is_int(eval("1 << 63"), kMin));
  CHECK(is_int(eval("3 << 63"), kMin));  // bit 1 is shifted out
  CHECK(is_int(eval("1024 >> 10"), 1));
  CHECK(is_int(eval("1 >> 63"), 0));
  CHECK(is_null(eval("1 << 64")));
  CHECK(is_null(eval("1 >> 64")));
  CHECK(is_null(eval("1 << -1")));
  CHECK(is_null(eval("1 >> -1")));
  CHECK(is_null(eval("1 << 1000")));
  CHECK(is_null(eval("1 << (e.code - 6)")));
  CHECK(is_int(eval("1 << e.code"), 32));
}

TEST_CASE("time and duration arithmetic") {
  Eval eval;
  CHECK(is_dur(eval("e.ts - e.ts"), 0));
  CHECK(is_time(eval("e.ts + 90s"), kT0 + 90 * kSec));
  CHECK(is_time(eval("90s + e.ts"), kT0 + 90 * kSec));
  CHECK(is_time(eval("e.ts - 1m"), kT0 - 60 * kSec));
  CHECK(is_dur(eval("(e.ts + 1500ms) - e.ts"), 1'500'000'000));
  CHECK(is_dur(eval("e.ts - (e.ts + 2s)"), -2 * kSec));
  CHECK(is_dur(eval("1m - 30s"), 30 * kSec));
  CHECK(is_dur(eval("30s * 3"), 90 * kSec));
  CHECK(is_dur(eval("3 * 30s"), 90 * kSec));
  CHECK(is_dur(eval("-30s"), -30 * kSec));
  CHECK(is_bool(eval("e.ts - 1s < e.ts"), true));
  CHECK(is_bool(eval("(e.ts + 1m) - e.ts == 60s"), true));
  CHECK(is_bool(eval("1m > 59s"), true));
  // An event without a time: everything derived from ts is null.
  eval.event = eval.make_event("node-01", std::nullopt, 5, Value::string("a"), Value::boolean(false));
  CHECK(is_null(eval("e.ts")));
  CHECK(is_null(eval("e.ts + 1s")));
  CHECK(is_null(eval("e.ts - e.ts")));
  CHECK(is_bool(eval("e.ts < e.ts + 1s"), false));
}

TEST_CASE("null propagation through operators and functions") {
  Eval eval;
  for (const char* e : {"int(\"x\") + 1", "1 - int(\"x\")", "int(\"x\") * 2", "-int(\"x\")", "int(\"x\") % 2",
                        "int(\"x\") << 1", "1 >> int(\"x\")", "int(\"x\") & 1", "int(\"x\") | 1", "int(\"x\") ^ 1",
                        "float(\"x\") * 1.5", "float(\"x\") + 1", "e.ts + duration(int(\"x\"), \"s\")"}) {
    CAPTURE(e);
    CHECK(is_null(eval(e)));
  }
  // A string field that is null (its capture did not match).
  eval.event = eval.make_event("node-01", kT0, 5, Value::null(), Value::null());
  for (const char* e : {"e.dev", "e.dev + \"x\"", "\"x\" + e.dev", "lower(e.dev)", "upper(e.dev)", "trim(e.dev)",
                        "len(e.dev)", "contains(e.dev, \"a\")", "starts_with(\"a\", e.dev)", "ends_with(e.dev, \"a\")",
                        "hex(e.dev)", "float(e.dev)"}) {
    CAPTURE(e);
    CHECK(is_null(eval(e)));
  }
}

TEST_CASE("comparisons with null are false - is (not) null tests for it") {
  Eval eval;
  for (const char* op : {"==", "!=", "<", "<=", ">", ">="}) {
    CAPTURE(op);
    CHECK(is_bool(eval(std::string("int(\"x\") ") + op + " 1"), false));
    CHECK(is_bool(eval(std::string("1 ") + op + " int(\"x\")"), false));
    CHECK(is_bool(eval(std::string("int(\"x\") ") + op + " int(\"y\")"), false));
  }
  CHECK(is_bool(eval("int(\"x\") is null"), true));
  CHECK(is_bool(eval("int(\"x\") is not null"), false));
  CHECK(is_bool(eval("int(\"5\") is not null"), true));
  CHECK(is_bool(eval("not (int(\"x\") == 1)"), true));
  CHECK(is_bool(eval("e.code > 4 and e.code <= 5 and e.code != 6"), true));
  CHECK(is_bool(eval("e.code == 5.0"), true));  // int and float compare numerically
  CHECK(is_bool(eval("e.code < 5.5"), true));
  CHECK(is_bool(eval("\"abc\" < \"abd\""), true));
  CHECK(is_bool(eval("\"b\" > \"abc\""), true));
  CHECK(is_bool(eval("e.dev == \"a\""), true));
  CHECK(is_bool(eval("e.fatal == false"), true));
}

TEST_CASE("and/or treat null as false") {
  Eval eval;
  eval.event = eval.make_event("node-01", kT0, 5, Value::string("a"), Value::null());  // fatal is null
  CHECK(is_bool(eval("e.fatal and true"), false));
  CHECK(is_bool(eval("true and e.fatal"), false));
  CHECK(is_bool(eval("e.fatal or true"), true));
  CHECK(is_bool(eval("e.fatal or false"), false));
  CHECK(is_bool(eval("e.fatal or e.code == 5"), true));
  CHECK(is_bool(eval("e.fatal is null"), true));
}

TEST_CASE("matches: RE2 search anywhere in the string, with flags") {
  Eval eval;
  CHECK(is_bool(eval("\"GPU has fallen off the bus\" matches /fallen off/"), true));
  CHECK(is_bool(eval("\"GPU has fallen off the bus\" matches /^fallen/"), false));
  CHECK(is_bool(eval("\"GPU has fallen off the bus\" matches /bus$/"), true));
  CHECK(is_bool(eval("\"ABC\" matches /b/"), false));
  CHECK(is_bool(eval("\"ABC\" matches /b/i"), true));
  CHECK(is_bool(eval("\"a\\nb\" matches /a.b/"), false));
  CHECK(is_bool(eval("\"a\\nb\" matches /a.b/s"), true));
  CHECK(is_bool(eval("e.dev matches /^(?<first>[a-z])$/"), true));
  CHECK(is_bool(eval("\"a/b\" matches /a\\/b/"), true));
  eval.event = eval.make_event("node-01", kT0, 5, Value::null(), Value::null());
  CHECK(is_bool(eval("e.dev matches /.*/"), false));
}

TEST_CASE("in / not in") {
  Eval eval;
  CHECK(is_bool(eval("e.code in [1, 5, 9]"), true));
  CHECK(is_bool(eval("e.code in [1, 9]"), false));
  CHECK(is_bool(eval("e.code not in [1, 9]"), true));
  CHECK(is_bool(eval("e.code not in [5]"), false));
  CHECK(is_bool(eval("e.dev in [\"b\", \"a\"]"), true));
  CHECK(is_bool(eval("e.dev in [\"A\"]"), false));
  CHECK(is_bool(eval("e.code in [5.0]"), true));  // numeric comparison
  CHECK(is_bool(eval("e.code in [int(\"x\"), 5]"), true));
  CHECK(is_bool(eval("e.code in [e.code + 1, e.code]"), true));
  // A null value is in no list, and (a comparison with null being false) not "not in" one either.
  CHECK(is_bool(eval("int(\"x\") in [1, 2]"), false));
  CHECK(is_bool(eval("int(\"x\") not in [1, 2]"), false));
}

TEST_CASE("coalesce: the first non-null argument") {
  Eval eval;
  CHECK(is_int(eval("coalesce(int(\"x\"), 5)"), 5));
  CHECK(is_int(eval("coalesce(3, 5)"), 3));
  CHECK(is_int(eval("coalesce(int(\"x\"), int(\"y\"), e.code)"), 5));
  CHECK(is_null(eval("coalesce(int(\"x\"), int(\"y\"))")));
  CHECK(is_int(eval("coalesce(e.code)"), 5));
  eval.event = eval.make_event("node-01", kT0, 5, Value::null(), Value::null());
  CHECK(is_str(eval("coalesce(e.dev, \"default\")"), "default"));
}

TEST_CASE("string functions") {
  Eval eval;
  CHECK(is_str(eval("lower(\"AbC-9\")"), "abc-9"));
  CHECK(is_str(eval("upper(\"aBc-9\")"), "ABC-9"));
  CHECK(is_str(eval("trim(\"  x y \\t\")"), "x y"));
  CHECK(is_str(eval("trim(\"\")"), ""));
  CHECK(is_int(eval("len(\"hello\")"), 5));
  CHECK(is_int(eval("len(\"\")"), 0));
  CHECK(is_bool(eval("contains(\"hello\", \"ell\")"), true));
  CHECK(is_bool(eval("contains(\"hello\", \"\")"), true));
  CHECK(is_bool(eval("contains(\"hello\", \"hello!\")"), false));
  CHECK(is_bool(eval("starts_with(\"hello\", \"he\")"), true));
  CHECK(is_bool(eval("starts_with(\"he\", \"hello\")"), false));
  CHECK(is_bool(eval("starts_with(\"hello\", \"lo\")"), false));
  CHECK(is_bool(eval("ends_with(\"hello\", \"lo\")"), true));
  CHECK(is_bool(eval("ends_with(\"lo\", \"hello\")"), false));
  CHECK(is_bool(eval("ends_with(\"hello\", \"he\")"), false));
}

TEST_CASE("str(): every value as text") {
  Eval eval;
  CHECK(is_str(eval("str(42)"), "42"));
  CHECK(is_str(eval("str(-3)"), "-3"));
  CHECK(is_str(eval("str(1.5)"), "1.5"));
  CHECK(is_str(eval("str(true)"), "true"));
  CHECK(is_str(eval("str(\"s\")"), "s"));
  CHECK(is_str(eval("str(30s)"), "30s"));
  CHECK(is_str(eval("str(90s)"), "1m30s"));
  CHECK(is_str(eval("str(500ms)"), "500ms"));
  CHECK(is_str(eval("str(e.ts)"), "2026-01-01T10:00:00Z"));
  CHECK(is_str(eval("str(e.ts + 1500ms)"), "2026-01-01T10:00:01.5Z"));
  CHECK(is_str(eval("str(int(\"x\"))"), "null"));
}

TEST_CASE("event built-in fields") {
  Eval eval;
  CHECK(is_str(eval("e.node"), "node-01"));
  CHECK(is_str(eval("e.host"), "node-01"));
  CHECK(is_str(eval("e.source"), "app"));
  CHECK(is_str(eval("e.file"), "logs/node-01/app.log"));
  CHECK(is_int(eval("e.line"), 7));
  CHECK(is_int(eval("e.offset"), 120));
  CHECK(is_time(eval("e.ts"), kT0));
  CHECK(is_str(eval("e.text"), "ERR 5"));
  CHECK(is_str(eval("e.kind"), "app.err"));
  CHECK(is_int(eval("e.code"), 5));
  CHECK(is_str(eval("e.dev"), "a"));
  CHECK(is_bool(eval("e.fatal"), false));
}

TEST_CASE("interpolation: each part as text, concatenated") {
  Eval eval;
  CHECK(is_str(eval("\"{e.dev}@{e.node}: code {e.code} at {e.ts}\""), "a@node-01: code 5 at 2026-01-01T10:00:00Z"));
  CHECK(is_str(eval("\"{{literal}} {e.code}\""), "{literal} 5"));
  CHECK(is_str(eval("\"fatal={e.fatal}\""), "fatal=false"));
}

// docs/language.md §4.3 and compiler/ir.h: a null part of an interpolated
// string prints as "?" (operators read text, not "null"), while str() gives "null".
TEST_CASE("interpolation: a null part prints as ?") {
  Eval eval;
  eval.event = eval.make_event("node-01", kT0, 5, Value::null(), Value::null());
  CHECK(is_str(eval("\"dev={e.dev}\""), "dev=?"));
  CHECK(is_str(eval("str(e.dev)"), "null"));
}

TEST_CASE("terminal, workload and outcome read the world - without one they are null") {
  Eval eval;
  CHECK(is_null(eval("terminal.state")));
  CHECK(is_null(eval("workload.nodes")));
  eval.use_world = true;
  eval.world.terminal_state.state = "FAILED";
  eval.world.terminal_state.exit_code = 137;
  eval.world.nodes = {"node-01", "node-02", "node-03"};
  CHECK(is_str(eval("terminal.state"), "FAILED"));
  CHECK(is_int(eval("terminal.exit_code"), 137));
  CHECK(is_int(eval("workload.nodes"), 3));
  CHECK(is_str(eval("workload.id"), "job-1"));
  eval.world.outcome_value.status = "attributed";
  eval.world.outcome_value.culprit_nodes = {"node-02"};
  CHECK(is_bool(eval("outcome.status == \"attributed\" and outcome.culprits == 1"), true));
  CHECK(is_bool(eval("outcome.status == \"ambiguous\""), false));
  eval.world.outcome_value.basis = "generic_origin_unseen";
  CHECK(is_bool(eval("outcome.basis == \"generic_origin_unseen\" and outcome.status == \"attributed\""), true));
}

TEST_CASE("covered() and coverage()") {
  Eval eval;
  eval.use_world = true;
  eval.world.nodes = {"node-01", "node-02", "node-03", "node-04"};
  eval.world.covered_pairs = {{"kernel", "node-01"}, {"kernel", "node-03"}, {"app", "node-02"}};
  CHECK(is_bool(eval("covered(kernel, e.node)"), true));
  CHECK(is_bool(eval("covered(app, e.node)"), false));
  CHECK(is_bool(eval("covered(kernel, \"node-02\")"), false));
  CHECK(is_float(eval("coverage(kernel)"), 0.5));
  CHECK(is_float(eval("coverage(app)"), 0.25));
  CHECK(is_float(eval("coverage(network)"), 0.0));
}

TEST_CASE("is_node(): exactly a workload node's name") {
  Eval eval;
  eval.use_world = true;
  eval.world.nodes = {"node-01", "node-02", "node-10"};
  CHECK(is_bool(eval("is_node(e.node)"), true));
  CHECK(is_bool(eval("is_node(\"node-02\")"), true));
  CHECK(is_bool(eval("is_node(\"node-1\")"), false));       // a prefix of node-10 is not a node
  CHECK(is_bool(eval("is_node(\"node-01,node-02\")"), false));  // nor a list of them
  CHECK(is_bool(eval("is_node(\"\")"), false));
  CHECK(is_bool(eval("is_node(null)"), false));
}

TEST_CASE("query aggregates: exists, none, count, nodes, max, min") {
  Eval eval;
  eval.use_world = true;
  Event a = eval.make_event("node-01", kT0 - 20 * kSec, 3, Value::string("x"), Value::boolean(true));
  Event b = eval.make_event("node-02", kT0 - 40 * kSec, 9, Value::string("y"), Value::boolean(false));
  Event c = eval.make_event("node-02", kT0 + 10 * kSec, 1, Value::string("z"), Value::boolean(true));
  Event d = eval.make_event("node-03", std::nullopt, 4, Value::null(), Value::boolean(false));
  eval.world.events = {&a, &b, &c, &d};
  CHECK(is_int(eval("count(y: event app.err)"), 4));
  CHECK(is_int(eval("count(y: event app.err where y.fatal)"), 2));
  CHECK(is_int(eval("nodes(y: event app.err)"), 3));
  CHECK(is_int(eval("nodes(y: event app.err where y.code > 2)"), 3));
  CHECK(is_int(eval("count(y: event app.err on same node)"), 1));
  CHECK(is_int(eval("count(y: event app.err on other nodes)"), 3));
  CHECK(is_bool(eval("exists(y: event app.err where y.code == 9)"), true));
  CHECK(is_bool(eval("exists(y: event app.err where y.code == 10)"), false));
  CHECK(is_bool(eval("none(y: event app.err where y.code == 10)"), true));
  CHECK(is_bool(eval("none(y: event app.err)"), false));
  CHECK(is_int(eval("max(y: event app.err, y.code)"), 9));
  CHECK(is_int(eval("min(y: event app.err, y.code)"), 1));
  CHECK(is_str(eval("max(y: event app.err, y.dev)"), "z"));  // nulls are skipped
  CHECK(is_time(eval("min(y: event app.err, y.ts)"), kT0 - 40 * kSec));
  CHECK(is_null(eval("max(y: event app.err where y.code > 100, y.code)")));
  // `within D before e`: e.ts - D <= t <= e.ts; candidates without a time never qualify.
  CHECK(is_int(eval("count(y: event app.err within 30s before e)"), 1));
  CHECK(is_int(eval("count(y: event app.err within 40s before e)"), 2));
  CHECK(is_int(eval("count(y: event app.err within 10s after e)"), 1));
  CHECK(is_int(eval("count(y: event app.err within 9s after e)"), 0));
  CHECK(is_int(eval("count(y: event app.err within 20s around e)"), 2));
  // The query binding does not leak: `e` is still the bound event afterwards.
  CHECK(is_int(eval("count(y: event app.err) + e.code"), 9));
  // Nested queries: events with an event on another node than `e` (node-01:
  // relations refer to the rule's `for` binding) within 1m around them; the
  // untimed event is never an anchor.
  CHECK(is_int(eval("count(y: event app.err where exists(z: event app.err on other nodes within 1m around y))"), 3));
}

TEST_CASE("within_window: boundaries of before, after and around") {
  Eval eval;
  auto program = program_for(std::string(kErrExtractor) +
                             "rule T stage symptoms {\n  for e: event app.err\n"
                             "  where exists(b: event app.err within 30s before e)\n"
                             "  where exists(a: event app.err within 30s after e)\n"
                             "  where exists(r: event app.err within 30s around e)\n"
                             "  where exists(n: event app.err)\n"
                             "  symptom t.x { summary: \"x\" }\n}\n");
  const auto& r = program->catalog().rules[0];
  REQUIRE(r.queries.size() == 4);
  const ir::Query& before = r.queries[0];
  const ir::Query& after = r.queries[1];
  const ir::Query& around = r.queries[2];
  const ir::Query& none = r.queries[3];
  Env env;
  env.slots.resize(static_cast<size_t>(r.slot_count));
  env.slots[0] = Item{&eval.event, nullptr};  // anchor at kT0
  const int64_t d = 30 * kSec;
  struct Case {
    int64_t offset;
    bool before, after, around;
  };
  const Case cases[] = {
      {-d - 1, false, false, false}, {-d, true, false, true}, {-1, true, false, true}, {0, true, true, true},
      {1, false, true, true},        {d, false, true, true},  {d + 1, false, false, false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.offset);
    CHECK(within_window(before, env, kT0 + c.offset) == c.before);
    CHECK(within_window(after, env, kT0 + c.offset) == c.after);
    CHECK(within_window(around, env, kT0 + c.offset) == c.around);
    CHECK(within_window(none, env, kT0 + c.offset));
  }
  // A candidate without a time never satisfies a `within`; a query without one takes anything.
  CHECK_FALSE(within_window(around, env, std::nullopt));
  CHECK(within_window(none, env, std::nullopt));
  // Nor does any candidate when the anchor has no time.
  Event untimed = eval.make_event("node-01", std::nullopt, 1, Value::string("a"), Value::boolean(false));
  env.slots[0] = Item{&untimed, nullptr};
  CHECK_FALSE(within_window(around, env, kT0));
}

// Regression: in `max(Y: QUERY, EXPR)` / `min(...)`, sema assigns the aggregate's
// query index before lowering EXPR (compiler/sema.cpp, ExprKind::QueryAggregate),
// so when EXPR contains a query of its own, that inner query takes the index
// and the outer aggregate runs over the inner query instead of its own (its
// kind, filter and binding are ignored). Repro: with app.err events of codes
// 3, 9, 1, 4, `max(y: event app.err where y.code > 5, count(z: event app.err
// where z.code < y.code))` should be 3 (only y = 9 qualifies, three codes are
// below 9) but evaluates to null.
TEST_CASE("query aggregates: max/min whose value contains another query") {
  Eval eval;
  eval.use_world = true;
  Event a = eval.make_event("node-01", kT0, 3, Value::string("x"), Value::boolean(true));
  Event b = eval.make_event("node-02", kT0, 9, Value::string("y"), Value::boolean(false));
  Event c = eval.make_event("node-02", kT0, 1, Value::string("z"), Value::boolean(true));
  Event d = eval.make_event("node-03", kT0, 4, Value::string("w"), Value::boolean(false));
  eval.world.events = {&a, &b, &c, &d};
  CHECK(is_int(eval("max(y: event app.err where y.code > 5, count(z: event app.err where z.code < y.code))"), 3));
  CHECK(is_int(eval("min(y: event app.err where y.code < 2, count(z: event app.err where z.code > y.code))"), 3));
}
