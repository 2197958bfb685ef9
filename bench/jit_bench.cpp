// jit_bench: rule evaluation, JIT vs interpreter, on a rule-heavy workload.
//
// Builds a synthetic catalog (8 event kinds, --rules rules, each a `for`
// query with a filter and a `where` over one kind, in the style of the
// bundled catalog: field comparisons, `in` lists, bit and integer arithmetic,
// float scaling, string equality and functions, interpolated summaries) and
// --events events spread over the kinds, then measures in one run:
//
//   1. condition evaluation: every rule's filter and `where`s over every
//      event of its kind, through run_expression() exactly as the engine
//      calls it, once with the interpreter and once with native code;
//   2. the whole rule engine (run_engine: sorting, indexing, every stage,
//      symptoms) with each evaluator;
//   3. compile latency of the native code: cold (empty cache) and warm
//      (cache hit), and the break-even event count at which the JIT's
//      compile time is paid back by faster evaluation.
//
// Results must agree between evaluators (match counts, symptom ids); the
// program exits non-zero if they do not. Usage:
//   jit_bench [--rules N] [--events N] [--repeat N] [--seed N] [--opt 0..3] [--codegen 0..3]
//             [--profile jit|interp|micro]
// --profile jit|interp only loops event-major condition evaluation on one
// engine (for perf); --profile micro prints the cost of one call of the
// first rule's `where` on each engine. Figures: bench/README.md.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "compiler/catalog_loader.h"
#include "runtime/engine.h"
#include "runtime/interpreter.h"
#include "runtime/native_code.h"

using namespace culprit;

namespace {

constexpr int kKinds = 8;
constexpr int64_t kT0 = 1767261600000000000;  // 2026-01-01T10:00:00Z

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string condition(std::mt19937_64& rng, int variant) {
  auto r = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1)); };
  switch (variant % 10) {
    case 0: return fmt::format("e.code in [{}, {}, {}, {}] and e.temp > {}.5", r(0, 999), r(0, 999), r(0, 999), r(0, 999), r(40, 90));
    case 1: return fmt::format("(e.code & 255) == {} or e.count * 3 + e.code > {}", r(0, 255), r(3500, 3990));
    case 2: return fmt::format("e.fatal and e.code % {} == {}", r(5, 13), r(0, 4));
    case 3: return fmt::format("e.dev == \"gpu{}\" and e.temp >= {}.0 and not e.fatal", r(0, 7), r(80, 99));
    case 4: return fmt::format("e.count - e.code > {} and e.count < {}", r(800, 950), r(990, 1000));
    case 5: return fmt::format("e.temp * 1.8 + 32.0 > {}.0 and e.code != {}", r(205, 212), r(0, 999));
    case 6: return fmt::format("((e.code << 2) ^ e.count) > {} and e.dev != \"gpu{}\"", r(3900, 4090), r(0, 7));
    case 7: return fmt::format("e.code >= {} and e.code <= {} and (e.count > {} or e.fatal)", r(0, 900), r(900, 999), r(900, 990));
    case 8: return fmt::format("coalesce(e.count, 0) + len(e.dev) * 100 > {} and e.temp < {}.0", r(1500, 1700), r(30, 60));
    default: return fmt::format("contains(e.msg, \"{}\") and e.code % {} == 0", r(0, 1) ? "ECC" : "link", r(3, 9));
  }
}

std::string catalog_text(int rules, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string t = "catalog \"jit-bench\" version \"1.0.0\"\n";
  for (int k = 0; k < kKinds; ++k) {
    t += fmt::format(R"(
extractor K{0} from app {{
  match /K{0} code=(?<c>\d+) dev=(?<d>\w+) temp=(?<t>[0-9.]+) n=(?<n>\d+)(?<f> fatal)? msg=(?<m>.*)/
  emit bench.k{0} {{ code: int(c), dev: d, temp: float(t), count: int(n), fatal: f is not null, msg: m }}
  test {{ line "K{0} code=1 dev=gpu0 temp=1.5 n=3 msg=x" expect bench.k{0} {{ code: 1, dev: "gpu0" }} }}
  test {{ line "nope" expect none }}
}}
)", k);
  }
  for (int i = 0; i < rules; ++i) {
    int k = i % kKinds;
    t += fmt::format(R"(
rule R{0} stage symptoms {{
  for e: event bench.k{1} where {2}
  where {3}
  symptom bench.s{4} key e.dev priority {5} {{ summary: "R{0}: code {{e.code}} on {{e.dev}}", code: e.code }}
}}
)", i, k, condition(rng, static_cast<int>(rng() % 10)), condition(rng, i), i % 20, i % 100);
  }
  return t;
}

std::vector<Event> make_events(const ir::Catalog& cat, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  static const char* msgs[] = {"ok", "link down", "ECC error", "retry", "ECC corrected", "timeout", "link flap", "ok again"};
  std::vector<int32_t> kinds;
  for (int k = 0; k < kKinds; ++k) kinds.push_back(cat.event_kind_id("bench.k" + std::to_string(k)));
  std::vector<Event> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Event e;
    e.kind = kinds[i % kKinds];
    e.host = fmt::format("node-{:02}", rng() % 16);
    e.producer = "K";
    e.where.host = e.host;
    e.where.source = "app";
    e.where.file = "logs/" + e.host + "/app.log";
    e.where.line = static_cast<int64_t>(i + 1);
    e.where.ts = kT0 + static_cast<int64_t>(i) * 1000000;
    const auto& schema = cat.event_kinds[static_cast<size_t>(e.kind)];
    e.fields.assign(schema.fields.size(), Value::null());
    auto set = [&](const char* name, Value v) {
      int32_t slot = schema.slot(cat.field_id(name));
      if (slot >= 0) e.fields[static_cast<size_t>(slot)] = std::move(v);
    };
    set("code", Value::integer(static_cast<int64_t>(rng() % 1000)));
    set("dev", Value::string("gpu" + std::to_string(rng() % 8)));
    set("temp", Value::real(20.0 + static_cast<double>(rng() % 8000) / 100.0));
    set("count", Value::integer(static_cast<int64_t>(rng() % 1000)));
    set("fatal", Value::boolean(rng() % 20 == 0));
    set("msg", Value::string(msgs[rng() % 8]));
    out.push_back(std::move(e));
  }
  return out;
}

// Every rule's filter and wheres over every event of its kind, through
// run_expression() as the engine calls them. `event_major`: each event meets
// all the rules of its kind while it is in cache (a streaming matcher's
// order: measures evaluation); else each rule walks all the events of its
// kind (the engine's order: memory traffic weighs as much as evaluation).
// Returns the number of (rule, event) pairs that pass.
size_t evaluate_conditions(const Program& p, const std::vector<std::vector<const Event*>>& by_kind, bool native,
                           bool event_major) {
  const auto& rules = p.catalog().rules;
  std::vector<Env> envs(rules.size());
  std::vector<std::vector<size_t>> rules_of_kind(by_kind.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    Env& env = envs[i];
    env.catalog = &p.catalog();
    env.regexes = &p.expression_regexes();
    env.rule = &rules[i];
    env.native = native ? p.native() : nullptr;
    env.slots.resize(static_cast<size_t>(std::max(1, rules[i].slot_count)));
    for (int32_t k : rules[i].for_query->kinds) rules_of_kind[static_cast<size_t>(k)].push_back(i);
  }
  size_t passed = 0;
  auto one = [&](size_t i, const Event* e) {
    Env& env = envs[i];
    const ir::Rule& r = rules[i];
    env.slots[0] = Item{e, nullptr};
    if (!passes_filter(*r.for_query, env)) return;
    for (const auto& w : r.wheres)
      if (!run_expression(w, env).truthy()) return;
    ++passed;
  };
  for (size_t k = 0; k < by_kind.size(); ++k) {
    if (event_major) {
      for (const Event* e : by_kind[k])
        for (size_t i : rules_of_kind[k]) one(i, e);
    } else {
      for (size_t i : rules_of_kind[k])
        for (const Event* e : by_kind[k]) one(i, e);
    }
  }
  return passed;
}

int g_codegen = 0;  // --codegen: LLVM machine code level (JitOptions::codegen_level)

std::shared_ptr<const Program> build(std::shared_ptr<const ir::Catalog> cat, bool jit, const std::string& cache, int opt,
                                     double& ms) {
  std::string error;
  JitOptions o;
  o.use_cache = !cache.empty();
  o.cache_dir = cache;
  o.opt_level = opt;
  o.codegen_level = g_codegen;
  auto t0 = std::chrono::steady_clock::now();
  auto p = Program::build(cat, error, jit ? jit_factory(o) : NativeCodeFactory{}, cache);
  ms = ms_since(t0);
  if (!p) {
    fmt::print(stderr, "jit_bench: {}\n", error);
    std::exit(2);
  }
  if (jit && !p->native()) {
    fmt::print(stderr, "jit_bench: the JIT is unavailable: {}\n", p->native_warning());
    std::exit(2);
  }
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  int rules = 240, repeat = 3, opt = 2;
  std::string profile;  // "jit" or "interp": only loop condition evaluation (event-major), for perf
  size_t events = 1000000;
  uint64_t seed = 1;
  auto usage = []() {
    fmt::print(stderr, "usage: jit_bench [--rules N] [--events N] [--repeat N] [--seed N] [--opt 0..3] [--codegen 0..3] [--profile jit|interp|micro]\n");
    return 2;
  };
  for (int i = 1; i < argc; i += 2) {
    std::string a = argv[i];
    if (i + 1 >= argc) return usage();
    long v = std::strtol(argv[i + 1], nullptr, 10);
    if (a == "--rules") rules = static_cast<int>(v);
    else if (a == "--events") events = static_cast<size_t>(v);
    else if (a == "--repeat") repeat = static_cast<int>(v);
    else if (a == "--seed") seed = static_cast<uint64_t>(v);
    else if (a == "--opt") opt = static_cast<int>(v);
    else if (a == "--codegen") g_codegen = static_cast<int>(v);
    else if (a == "--profile") profile = argv[i + 1];
    else return usage();
  }
  if (rules < 1 || events < 1 || repeat < 1 || opt < 0 || opt > 3 || g_codegen < 0 || g_codegen > 3) return usage();

  auto t0 = std::chrono::steady_clock::now();
  auto loaded = compile_sources({{"bench.attr", catalog_text(rules, seed)}});
  if (!loaded.ok()) {
    fmt::print(stderr, "{}", loaded.diagnostics.render());
    return 2;
  }
  double front_ms = ms_since(t0);
  auto cat = loaded.catalog;

  // Compile latency: cold (fresh cache directory) and warm (cache hit).
  std::string cache = (std::filesystem::temp_directory_path() / fmt::format("culprit-jit-bench-{}", ::getpid())).string();
  double interp_build_ms = 0, cold_ms = 0, warm_ms = 0;
  auto interp = build(cat, false, "", opt, interp_build_ms);
  auto cold = build(cat, true, cache, opt, cold_ms);
  const jit::Stats cold_stats = *native_stats(cold->native());
  double cold_native_ms = cold->timings().native_ms;
  auto jit = build(cat, true, cache, opt, warm_ms);
  const jit::Stats warm_stats = *native_stats(jit->native());
  double warm_native_ms = jit->timings().native_ms;
  cold.reset();
  std::error_code ec;
  std::filesystem::remove_all(cache, ec);

  double saved_per_event_ms = 0;
  auto events_v = make_events(*cat, events, seed);
  std::vector<std::vector<const Event*>> by_kind(cat->event_kinds.size());
  for (const auto& e : events_v) by_kind[static_cast<size_t>(e.kind)].push_back(&e);
  size_t pairs = 0;
  for (const auto& r : cat->rules) pairs += by_kind[static_cast<size_t>(r.for_query->kinds[0])].size();

  if (profile == "micro") {
    // Per-call cost of one top-level expression (the first rule's `where`) on one event.
    const ir::Rule& r = cat->rules.front();
    const Event* e = by_kind[static_cast<size_t>(r.for_query->kinds[0])].front();
    for (bool native : {false, true}) {
      const Program& p = native ? *jit : *interp;
      Env env;
      env.catalog = &p.catalog();
      env.regexes = &p.expression_regexes();
      env.rule = &p.catalog().rules.front();
      env.native = native ? p.native() : nullptr;
      env.slots.assign(static_cast<size_t>(std::max(1, r.slot_count)), Item{e, nullptr});
      const ir::Expr& w = p.catalog().rules.front().wheres.front();
      size_t n = 0;
      double best = 1e300;
      for (int rep = 0; rep < repeat; ++rep) {
        auto t = std::chrono::steady_clock::now();
        for (int i = 0; i < 1000000; ++i) n += run_expression(w, env).truthy();
        best = std::min(best, ms_since(t));
      }
      fmt::print("{:<12} {:6.1f} ns/call ({})\n", native ? "jit" : "interpreter", best * 1e6 / 1e6, n);
    }
    return 0;
  }
  if (!profile.empty()) {
    size_t n = 0;
    for (int i = 0; i < repeat; ++i) n += evaluate_conditions(profile == "jit" ? *jit : *interp, by_kind, profile == "jit", true);
    fmt::print("{} pairs passed\n", n);
    return 0;
  }
  fmt::print("workload: {} rules over {} event kinds, {} events, {} (rule, event) pairs; front end {:.0f} ms\n",
             cat->rules.size(), kKinds, events, pairs, front_ms);
  fmt::print("native expressions: {}/{} ({} bytes of object code, -O{})\n", cold_stats.compiled, cold_stats.expressions,
             cold_stats.object_bytes, opt);

  // 1. condition evaluation, best of `repeat`, engines interleaved.
  for (bool event_major : {true, false}) {
    double best_interp = 1e300, best_jit = 1e300;
    size_t passed_interp = 0, passed_jit = 0;
    for (int i = 0; i < repeat; ++i) {
      auto a = std::chrono::steady_clock::now();
      passed_interp = evaluate_conditions(*interp, by_kind, false, event_major);
      best_interp = std::min(best_interp, ms_since(a));
      auto b = std::chrono::steady_clock::now();
      passed_jit = evaluate_conditions(*jit, by_kind, true, event_major);
      best_jit = std::min(best_jit, ms_since(b));
    }
    if (passed_interp != passed_jit) {
      fmt::print(stderr, "MISMATCH: {} pairs pass with the interpreter, {} with the JIT\n", passed_interp, passed_jit);
      return 1;
    }
    double r = best_interp / best_jit;
    fmt::print("\n1{}. condition evaluation, {} ({} pairs, {} pass), best of {}:\n", event_major ? "a" : "b",
               event_major ? "event-major: each event against all rules of its kind"
                           : "rule-major (the engine's order): each rule over all events of its kind",
               pairs, passed_jit, repeat);
    fmt::print("   interpreter {:9.1f} ms  {:7.1f} ns/pair  {:6.2f} M pairs/s\n", best_interp,
               best_interp * 1e6 / static_cast<double>(pairs), static_cast<double>(pairs) / best_interp / 1e3);
    fmt::print("   jit         {:9.1f} ms  {:7.1f} ns/pair  {:6.2f} M pairs/s\n", best_jit,
               best_jit * 1e6 / static_cast<double>(pairs), static_cast<double>(pairs) / best_jit / 1e3);
    fmt::print("   ratio       {:9.2f}x\n", r);
    if (event_major) {
      saved_per_event_ms = (best_interp - best_jit) / static_cast<double>(events);
    }
  }

  // 2. the whole engine, once per evaluator.
  WorkloadContext ctx;
  ctx.workload_id = "bench";
  for (int n = 0; n < 16; ++n) ctx.nodes.push_back(fmt::format("node-{:02}", n));
  ctx.terminal.state = "FAILED";
  ctx.terminal.exit_code = 1;
  std::vector<std::pair<std::string, std::string>> host_sources;
  for (const auto& n : ctx.nodes) host_sources.emplace_back("app", n);
  auto a = std::chrono::steady_clock::now();
  EngineResult ri = run_engine(*interp, ctx, host_sources, events_v);
  double engine_interp = ms_since(a);
  auto b = std::chrono::steady_clock::now();
  EngineResult rj = run_engine(*jit, ctx, host_sources, events_v);
  double engine_jit = ms_since(b);
  bool same = ri.symptoms.size() == rj.symptoms.size();
  for (size_t i = 0; same && i < ri.symptoms.size(); ++i)
    same = ri.symptoms[i].id == rj.symptoms[i].id && ri.symptoms[i].count == rj.symptoms[i].count &&
           ri.symptoms[i].summary == rj.symptoms[i].summary;
  if (!same) {
    fmt::print(stderr, "MISMATCH: the engines produced different symptoms\n");
    return 1;
  }
  fmt::print("\n2. rule engine end to end (sort, index, all stages; {} symptoms):\n", rj.symptoms.size());
  fmt::print("   interpreter {:9.1f} ms\n   jit         {:9.1f} ms\n   ratio       {:9.2f}x\n", engine_interp, engine_jit,
             engine_interp / engine_jit);

  // 3. compile latency and break-even.
  fmt::print("\n3. native code latency (the JIT's part of Program::build; whole builds: interpreter {:.1f} ms, "
             "jit cold {:.1f} ms, jit warm {:.1f} ms incl. Hyperscan):\n", interp_build_ms, cold_ms, warm_ms);
  fmt::print("   cold  {:8.1f} ms  (LLVM IR {:.1f}, optimize {:.1f}, emit {:.1f}, cache write {:.1f}, link {:.1f})\n",
             cold_native_ms, cold_stats.codegen_ms, cold_stats.optimize_ms, cold_stats.emit_ms, cold_stats.cache_ms,
             cold_stats.link_ms);
  fmt::print("   warm  {:8.1f} ms  (cache read {:.1f}, link {:.1f}; hit: {})\n", warm_native_ms, warm_stats.cache_ms,
             warm_stats.link_ms, warm_stats.cache_hit ? "yes" : "no");
  if (saved_per_event_ms > 0) {
    fmt::print("   break-even: {:.0f} events cold, {:.0f} events warm ({:.1f} ns saved per event, {} rules per event kind)\n",
               cold_native_ms / saved_per_event_ms, warm_native_ms / saved_per_event_ms, saved_per_event_ms * 1e6,
               rules / kKinds);
  }
  return 0;
}
