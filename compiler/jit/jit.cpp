// The JIT driver: one process-wide LLJIT, one JITDylib per compiled catalog,
// object code emitted here (not by LLJIT's compile layer) so that it can be
// cached on disk and loaded again with addObjectFile.
//
//   cold:  IR --codegen.cpp--> LLVM module --O2--> object --cache.store-->
//          JITDylib (helpers as absolute symbols + the object) --lookup--> fns
//   warm:  cache.load --> JITDylib --lookup--> fns
//
// Every LLVM Error is turned into a message; LLVM's fatal error handler is
// replaced by one that says what happened and exits with status 3 instead of
// aborting (it can only fire on a bug: the module is verified before codegen).
#include "compiler/jit/jit.h"

#include <fmt/format.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "compiler/jit/cache.h"
#include "compiler/jit/codegen.h"
#include "compiler/query_plan.h"
#include "base/sha256.h"

namespace culprit::jit {

namespace {

// Bump when generated code or the cache payload changes meaning: old cache
// entries then stop matching.
constexpr const char* kCodegenVersion = "culprit-jit-12";

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string to_string(llvm::Error e) {
  std::string s;
  llvm::handleAllErrors(std::move(e), [&](const llvm::ErrorInfoBase& info) {
    if (!s.empty()) s += "; ";
    s += info.message();
  });
  return s;
}

void fatal_handler(void*, const char* reason, bool) {
  // LLVM cannot continue after this; leave with a message, not an abort.
  std::string msg = fmt::format("culprit: internal error in the LLVM JIT: {}\n"
                                "culprit: rerun with --engine interp to use the interpreter\n",
                                reason ? reason : "?");
  ssize_t ignored = ::write(STDERR_FILENO, msg.data(), msg.size());
  (void)ignored;
  ::_exit(3);
}

// The process-wide ORC instance. Created on first use and never destroyed:
// compiled catalogs may outlive any static object, and the OS reclaims the
// JIT's memory at exit anyway.
struct Jit {
  bool ready = false;
  std::string why;
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  std::atomic<uint64_t> generation{0};
  std::mutex errors_mu;
  std::string session_errors;  // errors ORC reports asynchronously

  std::string take_session_errors() {
    std::lock_guard<std::mutex> lock(errors_mu);
    return std::exchange(session_errors, {});
  }
};

Jit& instance() {
  static Jit* jit = [] {
    auto* j = new Jit();
    // An operator's off switch (and the way to test the fallback): the
    // process then behaves as on a host without a native target.
    if (const char* off = std::getenv("CULPRIT_JIT_DISABLE"); off && *off && std::string(off) != "0") {
      j->why = "disabled by CULPRIT_JIT_DISABLE";
      return j;
    }
    llvm::install_fatal_error_handler(fatal_handler, nullptr);
    llvm::install_bad_alloc_error_handler(fatal_handler, nullptr);
    if (llvm::InitializeNativeTarget() || llvm::InitializeNativeTargetAsmPrinter()) {
      j->why = "LLVM has no native target for this host";
      return j;
    }
    auto built = llvm::orc::LLJITBuilder().create();
    if (!built) {
      j->why = "cannot create the LLVM JIT: " + to_string(built.takeError());
      return j;
    }
    j->lljit = std::move(*built);
    j->lljit->getExecutionSession().setErrorReporter([j](llvm::Error e) {
      std::string msg = to_string(std::move(e));
      std::lock_guard<std::mutex> lock(j->errors_mu);
      if (j->session_errors.size() < 4096) j->session_errors += (j->session_errors.empty() ? "" : "; ") + msg;
    });
    j->ready = true;
    return j;
  }();
  return *jit;
}

// --------------------------------------------------------- the cache key

void put(std::string& out, int64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

// Everything of an expression tree the generated code depends on.
void fingerprint(const ir::Expr& e, std::string& out) {
  out += static_cast<char>(e.op);
  out += static_cast<char>(e.type);
  put(out, e.a);
  put(out, e.b);
  const Value& c = e.constant;
  out += static_cast<char>(c.type);
  switch (c.type) {
    case Type::Bool: out += c.b ? '1' : '0'; break;
    case Type::Int:
    case Type::Time:
    case Type::Duration: put(out, c.i); break;
    case Type::Float: out.append(reinterpret_cast<const char*>(&c.f), sizeof c.f); break;
    case Type::String:
      put(out, static_cast<int64_t>(c.s.size()));
      out += c.s;
      break;
    case Type::Null: break;
  }
  put(out, static_cast<int64_t>(e.kids.size()));
  for (const auto& k : e.kids) fingerprint(k, out);
}

// --------------------------------------------------- the cache payload

struct Payload {
  uint64_t expressions = 0;
  std::string prefix;
  std::vector<bool> compiled;
  std::vector<std::string> not_compiled;
  std::vector<std::string> objects;  // one per module compiled in parallel
  size_t object_bytes() const {
    size_t n = 0;
    for (const auto& o : objects) n += o.size();
    return n;
  }
};

void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
void put_bytes(std::string& out, std::string_view s) {
  put_u64(out, s.size());
  out.append(s);
}

std::string encode(const Payload& p) {
  std::string out = "CJO2";
  put_u64(out, p.expressions);
  put_bytes(out, p.prefix);
  std::string bits(p.compiled.size(), '\0');
  for (size_t i = 0; i < p.compiled.size(); ++i) bits[i] = p.compiled[i] ? 1 : 0;
  put_bytes(out, bits);
  put_u64(out, p.not_compiled.size());
  for (const auto& s : p.not_compiled) put_bytes(out, s);
  put_u64(out, p.objects.size());
  for (const auto& o : p.objects) put_bytes(out, o);
  return out;
}

// Bounds-checked reader: a payload that does not parse is a cache miss.
struct Reader {
  std::string_view in;
  bool ok = true;
  uint64_t u64() {
    if (in.size() < 8) {
      ok = false;
      return 0;
    }
    uint64_t v = 0;
    std::memcpy(&v, in.data(), 8);
    in.remove_prefix(8);
    return v;
  }
  std::string bytes() {
    uint64_t n = u64();
    if (!ok || n > in.size()) {
      ok = false;
      return {};
    }
    std::string s(in.substr(0, n));
    in.remove_prefix(n);
    return s;
  }
};

bool decode(std::string_view data, Payload& p) {
  if (data.substr(0, 4) != "CJO2") return false;
  Reader r{data.substr(4)};
  p.expressions = r.u64();
  p.prefix = r.bytes();
  std::string bits = r.bytes();
  uint64_t n = r.u64();
  if (!r.ok || n > 1000000) return false;
  for (uint64_t i = 0; i < n && r.ok; ++i) p.not_compiled.push_back(r.bytes());
  uint64_t objects = r.u64();
  if (!r.ok || objects > 64) return false;
  for (uint64_t i = 0; i < objects && r.ok; ++i) p.objects.push_back(r.bytes());
  if (!r.ok || !r.in.empty() || bits.size() != p.expressions) return false;
  p.compiled.resize(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) p.compiled[i] = bits[i] != 0;
  return true;
}

// ------------------------------------------------------ code generation

// The machine code level is separate from the IR pipeline: once the IR
// pipeline has promoted values to registers and folded the null/select
// chains, LLVM's machine passes (greedy register allocation, scheduling,
// machine LICM/CSE) cost three quarters of a cold compile and gain nothing
// measurable on these small helper-calling functions (bench/jit_bench rows
// 1a, 1b and 2 equal within noise), so the default is level 0.
std::unique_ptr<llvm::TargetMachine> host_target_machine(int codegen_level, std::string& error) {
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    error = "cannot describe the host target: " + to_string(jtmb.takeError());
    return nullptr;
  }
  jtmb->setCodeGenOptLevel(codegen_level <= 0 ? llvm::CodeGenOptLevel::None
                           : codegen_level == 1 ? llvm::CodeGenOptLevel::Less
                           : codegen_level == 2 ? llvm::CodeGenOptLevel::Default
                                            : llvm::CodeGenOptLevel::Aggressive);
  // Position-independent, small code model: the object is linked at any
  // address in any later process (cached), helpers are reached through the GOT.
  jtmb->setRelocationModel(llvm::Reloc::PIC_);
  jtmb->setCodeModel(llvm::CodeModel::Small);
  auto tm = jtmb->createTargetMachine();
  if (!tm) {
    error = "cannot create a target machine: " + to_string(tm.takeError());
    return nullptr;
  }
  return std::move(*tm);
}

// One module: IR -> LLVM IR -> optimized -> object code. Runs on its own
// thread with its own LLVMContext and TargetMachine (neither is shared).
struct Part {
  std::vector<size_t> indices;
  std::string object;
  std::vector<bool> compiled;
  std::vector<std::string> not_compiled;
  std::string error;
  double codegen_ms = 0, optimize_ms = 0, emit_ms = 0;
};

void compile_part(const ir::Catalog& catalog, const std::vector<const ir::Expr*>& exprs,
                  const std::vector<std::vector<size_t>>& copies, const Options& options, const std::string& prefix,
                  size_t number, Part& part) {
  auto t0 = std::chrono::steady_clock::now();
  auto tm = host_target_machine(options.codegen_level, part.error);
  if (!tm) return;
  // Instruction selection is the largest single cost of a cold compile;
  // FastISel (falling back to SelectionDAG where it must) cuts it by about
  // a quarter at no measurable cost in speed for these small functions.
  // (At codegen level 0 LLVM picks FastISel anyway.)
  if (options.opt_level < 3) tm->setFastISel(true);
  llvm::LLVMContext context;
  std::string name = fmt::format("{}_m{}", prefix, number);
  detail::Generated gen = detail::generate(context, catalog, exprs, part.indices, copies, name, prefix, options.layout,
                                               part.error);
  if (!gen.module) return;
  gen.module->setDataLayout(tm->createDataLayout());
  gen.module->setTargetTriple(tm->getTargetTriple().str());
  part.compiled = std::move(gen.compiled);
  part.not_compiled = std::move(gen.not_compiled);
  part.codegen_ms = ms_since(t0);

  auto t1 = std::chrono::steady_clock::now();
  if (options.opt_level > 0) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    // The functions are small, straight-line and call-free but for helpers:
    // what pays is promoting the merge variables to registers (sroa) and
    // merging repeated field reads and checks (early-cse, gvn). -O3 runs
    // LLVM's standard O2 pipeline. instcombine and simplifycfg were dropped:
    // on the bundled catalog they were half of a cold compile's optimize
    // time and made the object code larger (704 vs 681 KB), while a whole
    // diagnosis of a 1M-event bundle executed the same number of
    // instructions within 0.1 % (cachegrind) and jit_bench's filter-only
    // evaluation 3 % more.
    llvm::ModulePassManager mpm;
    if (options.opt_level >= 3) {
      mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
    } else {
      const char* pipeline = options.opt_level == 1 ? "function(sroa,early-cse)" : "function(sroa,early-cse<memssa>,gvn)";
      if (auto e = pb.parsePassPipeline(mpm, pipeline)) {
        part.error = "LLVM pass pipeline: " + to_string(std::move(e));
        return;
      }
    }
    mpm.run(*gen.module, mam);
  }
  part.optimize_ms = ms_since(t1);

  auto t2 = std::chrono::steady_clock::now();
  llvm::SmallVector<char, 0> buffer;
  {
    llvm::raw_svector_ostream os(buffer);
    llvm::legacy::PassManager pm;
    if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
      part.error = "the host target cannot emit object files";
      return;
    }
    pm.run(*gen.module);
  }
  part.object.assign(buffer.data(), buffer.size());
  part.emit_ms = ms_since(t2);

  // Debugging aid (docs/jit.md): CULPRIT_JIT_DUMP=DIR writes the optimized
  // LLVM IR and the object file of every module of a cold compile there.
  if (const char* dump = std::getenv("CULPRIT_JIT_DUMP"); dump && *dump) {
    std::error_code ec;
    llvm::raw_fd_ostream ll(std::string(dump) + "/" + name + ".ll", ec);
    if (!ec) gen.module->print(ll, nullptr);
    llvm::raw_fd_ostream obj(std::string(dump) + "/" + name + ".o", ec);
    if (!ec) obj.write(part.object.data(), part.object.size());
  }
}

size_t tree_size(const ir::Expr& e) {
  size_t n = 1;
  for (const auto& k : e.kids) n += tree_size(k);
  return n;
}

// Expressions whose trees are identical (equal fingerprints) share one
// function: rules repeat the same filters, keys and field copies, and 503
// of the bundled catalog's 1,199 expressions repeat an earlier one. Only
// the first of each is compiled; the others become aliases of its symbol
// (codegen.h), which costs LLVM nothing.
struct Repeats {
  std::vector<size_t> firsts;               // the expressions compiled, in order
  std::vector<std::vector<size_t>> copies;  // by first: the later identical ones
};

Repeats find_repeats(const std::vector<std::string>& fingerprints) {
  Repeats r;
  r.copies.resize(fingerprints.size());
  std::unordered_map<std::string_view, size_t> first_of;
  for (size_t i = 0; i < fingerprints.size(); ++i) {
    auto [it, fresh] = first_of.emplace(fingerprints[i], i);
    if (fresh) {
      r.firsts.push_back(i);
    } else {
      r.copies[it->second].push_back(i);
    }
  }
  return r;
}

// Splits the distinct expressions into contiguous parts of about equal size
// and compiles them on as many threads as the host has cores (at most 8, and
// only when there is enough work to pay for a thread).
bool build_object(const ir::Catalog& catalog, const std::vector<const ir::Expr*>& exprs, const Repeats& repeats,
                  const Options& options, Payload& payload, Stats& stats, std::string& error) {
  auto t0 = std::chrono::steady_clock::now();
  const std::vector<size_t>& firsts = repeats.firsts;
  const std::vector<std::vector<size_t>>& copies = repeats.copies;
  size_t total = 0;
  std::vector<size_t> sizes;
  for (size_t i : firsts) total += sizes.emplace_back(tree_size(*exprs[i]));
  size_t threads = std::max<size_t>(1, std::min<size_t>({std::thread::hardware_concurrency(), 8, total / 400 + 1}));
  std::vector<Part> parts(threads);
  size_t done = 0;
  for (size_t k = 0, p = 0; k < firsts.size(); ++k) {
    parts[p].indices.push_back(firsts[k]);
    done += sizes[k];
    if (p + 1 < threads && done * threads >= total * (p + 1)) ++p;
  }
  std::vector<std::thread> workers;
  for (size_t p = 1; p < threads; ++p) {
    try {
      workers.emplace_back(compile_part, std::cref(catalog), std::cref(exprs), std::cref(copies), std::cref(options),
                           std::cref(payload.prefix), p, std::ref(parts[p]));
    } catch (const std::exception&) {
      compile_part(catalog, exprs, copies, options, payload.prefix, p, parts[p]);  // no thread: do it here
    }
  }
  compile_part(catalog, exprs, copies, options, payload.prefix, 0, parts[0]);
  for (auto& w : workers) w.join();

  payload.compiled.assign(exprs.size(), false);
  payload.objects.clear();
  payload.not_compiled.clear();
  for (auto& part : parts) {
    if (!part.error.empty()) {
      error = part.error;
      return false;
    }
    for (size_t i : part.indices) {
      payload.compiled[i] = part.compiled[i];
      for (size_t j : copies[i]) payload.compiled[j] = part.compiled[j];
    }
    payload.not_compiled.insert(payload.not_compiled.end(), part.not_compiled.begin(), part.not_compiled.end());
    payload.objects.push_back(std::move(part.object));
    stats.codegen_ms += part.codegen_ms;
    stats.optimize_ms += part.optimize_ms;
    stats.emit_ms += part.emit_ms;
  }
  stats.threads = threads;
  stats.compile_wall_ms = ms_since(t0);
  return true;
}

}  // namespace

// ------------------------------------------------------------ resources

struct CompiledCatalog::Resources {
  llvm::orc::LLJIT* jit = nullptr;
  llvm::orc::JITDylib* dylib = nullptr;
  llvm::orc::ResourceTrackerSP tracker;

  // Frees the machine code, then the dylib (with the helper symbols).
  ~Resources() {
    if (tracker) {
      if (auto e = tracker->remove()) llvm::consumeError(std::move(e));
    }
    if (dylib && jit) {
      if (auto e = jit->getExecutionSession().removeJITDylib(*dylib)) llvm::consumeError(std::move(e));
    }
  }
};

CompiledCatalog::~CompiledCatalog() = default;

namespace {

// Links `object` into a fresh JITDylib and resolves the compiled functions.
bool link(Jit& jit, const std::vector<Helper>& helpers, const Payload& p, std::vector<CulpritJitFn>& functions,
          std::unique_ptr<CompiledCatalog::Resources>& res, std::string& error) {
  auto& es = jit.lljit->getExecutionSession();
  auto jd = jit.lljit->createJITDylib(fmt::format("culprit.gen{}", jit.generation++));
  if (!jd) {
    error = "cannot create a JITDylib: " + to_string(jd.takeError());
    return false;
  }
  res = std::make_unique<CompiledCatalog::Resources>();
  res->jit = jit.lljit.get();
  res->dylib = &*jd;
  llvm::orc::SymbolMap symbols;
  for (const auto& h : helpers)
    symbols[jit.lljit->mangleAndIntern(h.name)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(h.address), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  if (auto e = jd->define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
    error = "cannot register the runtime helpers: " + to_string(std::move(e));
    return false;
  }
  res->tracker = jd->createResourceTracker();
  for (size_t i = 0; i < p.objects.size(); ++i) {
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(p.objects[i], fmt::format("{}_m{}", p.prefix, i));
    if (auto e = jit.lljit->addObjectFile(res->tracker, std::move(buffer))) {
      error = "cannot add the object code: " + to_string(std::move(e));
      return false;
    }
  }
  llvm::orc::SymbolLookupSet names;
  std::vector<size_t> indices;
  for (size_t i = 0; i < p.compiled.size(); ++i) {
    if (!p.compiled[i]) continue;
    names.add(jit.lljit->mangleAndIntern(detail::symbol_name(p.prefix, i)));
    indices.push_back(i);
  }
  functions.assign(p.compiled.size(), nullptr);
  if (indices.empty()) return true;
  auto found = es.lookup(llvm::orc::makeJITDylibSearchOrder(&*jd, llvm::orc::JITDylibLookupFlags::MatchAllSymbols),
                         std::move(names));
  if (!found) {
    error = "cannot link the object code: " + to_string(found.takeError());
    std::string more = jit.take_session_errors();
    if (!more.empty()) error += " (" + more + ")";
    return false;
  }
  for (size_t i : indices) {
    auto it = found->find(jit.lljit->mangleAndIntern(detail::symbol_name(p.prefix, i)));
    if (it == found->end()) {
      error = "symbol missing from the object code";
      return false;
    }
    functions[i] = it->second.getAddress().toPtr<CulpritJitFn>();
  }
  return true;
}

}  // namespace

// ------------------------------------------------------------ public API

bool native_target_ready(std::string* why) {
  Jit& j = instance();
  if (why) *why = j.why;
  return j.ready;
}

std::string llvm_version() { return LLVM_VERSION_STRING; }

std::string host_cpu_id() {
  std::string out = llvm::sys::getHostCPUName().str();
  std::vector<std::string> features;
  for (const auto& f : llvm::sys::getHostCPUFeatures()) features.push_back((f.second ? "+" : "-") + f.first().str());
  std::sort(features.begin(), features.end());
  for (size_t i = 0; i < features.size(); ++i) out += (i ? "," : " ") + features[i];
  return out;
}

const std::vector<std::string>& required_helpers() {
  static const std::vector<std::string> names = {
      "culprit_jit_event_field", "culprit_jit_symptom_field", "culprit_jit_capture",   "culprit_jit_record",
      "culprit_jit_event_fields", "culprit_jit_symptom_fields",
      "culprit_jit_covered",     "culprit_jit_coverage",      "culprit_jit_is_node",      "culprit_jit_str_compare", "culprit_jit_str_test",
      "culprit_jit_str_concat",  "culprit_jit_str_case",      "culprit_jit_str_trim",  "culprit_jit_parse_int",
      "culprit_jit_parse_float", "culprit_jit_duration",      "culprit_jit_to_text",   "culprit_jit_interpolate",
      "culprit_jit_matches",     "culprit_jit_query",         "culprit_jit_group",
      "culprit_jit_parse_time"};
  return names;
}

std::vector<const ir::Expr*> top_level_expressions(const ir::Catalog& catalog) {
  std::vector<const ir::Expr*> out;
  auto add = [&](const std::optional<ir::Expr>& e) {
    if (e) out.push_back(&*e);
  };
  auto add_query = [&](const std::optional<ir::Query>& q) {
    if (q) add(q->filter);
  };
  for (const auto& x : catalog.extractors)
    for (const auto& f : x.fields) out.push_back(&f.value);
  for (const auto& r : catalog.rules) {
    add_query(r.for_query);
    for (const auto& w : r.wheres) out.push_back(&w);
    for (const auto& k : r.group_keys) out.push_back(&k);
    for (const auto& q : r.queries) add(q.filter);
    for (const auto& a : r.actions) {
      add(a.node);
      add(a.key);
      add(a.priority);
      add(a.summary);
      add(a.at);
      for (const auto& f : a.fields) out.push_back(&f.value);
      add_query(a.query);
      add(a.reason);
      add(a.value);
    }
  }
  // The sides of the equalities that index queries (compiler/query_plan.h):
  // the engine evaluates them on their own, to file candidates and to probe.
  for (const ir::Expr* e : plan::plan_catalog(catalog).key_expressions()) out.push_back(e);
  return out;
}

std::shared_ptr<const CompiledCatalog> compile(const ir::Catalog& catalog, const std::vector<Helper>& helpers,
                                               const Options& options, std::string& error) {
  Jit& jit = instance();
  if (!jit.ready) {
    error = jit.why;
    return nullptr;
  }
  std::set<std::string> given;
  for (const auto& h : helpers)
    if (h.name && h.address) given.insert(h.name);
  for (const auto& name : required_helpers()) {
    if (!given.count(name)) {
      error = "runtime helper '" + name + "' is not registered";
      return nullptr;
    }
  }

  std::shared_ptr<CompiledCatalog> out(new CompiledCatalog());
  Stats& stats = out->stats_;
  std::vector<const ir::Expr*> exprs = top_level_expressions(catalog);
  stats.expressions = exprs.size();

  std::vector<std::string> fingerprints(exprs.size());
  std::string ir_print;
  for (size_t i = 0; i < exprs.size(); ++i) {
    fingerprint(*exprs[i], fingerprints[i]);
    ir_print += fingerprints[i];
  }
  // Field slots per kind are baked into the code when fields are read in place.
  for (const auto* kinds : {&catalog.event_kinds, &catalog.symptom_kinds}) {
    put(ir_print, static_cast<int64_t>(kinds->size()));
    for (const auto& k : *kinds) {
      put(ir_print, static_cast<int64_t>(k.slot_of_name.size()));
      for (int32_t slot : k.slot_of_name) put(ir_print, slot);
    }
  }
  std::string ir_digest = sha256_hex(ir_print);
  Repeats repeats = find_repeats(fingerprints);
  stats.distinct = repeats.firsts.size();
  Payload payload;
  payload.expressions = exprs.size();
  payload.prefix = "cx" + sha256_hex(catalog.digest + "\n" + ir_digest).substr(0, 16);
  const ValueLayout& l = options.layout;
  std::string key = fmt::format("{}\nllvm {}\ncpu {}\nopt {} codegen {}\nlayout {} {} {} {} {} {} {} {}\ncatalog {}\nir {}\n",
                                kCodegenVersion, llvm_version(), host_cpu_id(), options.opt_level, options.codegen_level, l.usable, l.size, l.type,
                                l.boolean, l.integer, l.real, l.string_data, l.string_size, catalog.digest, ir_digest);

  bool linked = false;
  if (!options.cache_dir.empty()) {
    auto t0 = std::chrono::steady_clock::now();
    std::string bytes, note;
    Payload cached;
    if (cache::load(options.cache_dir, "jit", key, bytes, note)) {
      if (decode(bytes, cached) && cached.expressions == exprs.size() && cached.prefix == payload.prefix) {
        stats.cache_ms = ms_since(t0);
        auto t1 = std::chrono::steady_clock::now();
        std::string link_error;
        std::unique_ptr<CompiledCatalog::Resources> res;
        if (link(jit, helpers, cached, out->functions_, res, link_error)) {
          out->resources_ = std::move(res);
          payload = std::move(cached);
          stats.cache_hit = true;
          stats.code_digest = sha256_hex(bytes);
          linked = true;
        } else {
          res.reset();  // drops the half-linked dylib
          stats.cache_note = "cached object rejected: " + link_error;
        }
        stats.link_ms = ms_since(t1);
      } else {
        stats.cache_note = "cached payload does not parse";
      }
    } else {
      stats.cache_note = note.empty() ? "miss" : "rejected: " + note;
    }
  } else {
    stats.cache_note = "disabled";
  }

  if (!linked) {
    if (!build_object(catalog, exprs, repeats, options, payload, stats, error)) return nullptr;
    if (!options.cache_dir.empty()) {
      auto t0 = std::chrono::steady_clock::now();
      std::string note, encoded = encode(payload);
      stats.code_digest = sha256_hex(encoded);
      if (!cache::store(options.cache_dir, "jit", key, encoded, note)) stats.cache_note += "; not stored: " + note;
      stats.cache_ms += ms_since(t0);
    }
    auto t1 = std::chrono::steady_clock::now();
    std::unique_ptr<CompiledCatalog::Resources> res;
    if (!link(jit, helpers, payload, out->functions_, res, error)) return nullptr;
    out->resources_ = std::move(res);
    stats.link_ms = ms_since(t1);
  }
  stats.object_bytes = payload.object_bytes();
  stats.not_compiled = payload.not_compiled;
  stats.compiled = static_cast<size_t>(std::count(payload.compiled.begin(), payload.compiled.end(), true));
  return out;
}

}  // namespace culprit::jit
