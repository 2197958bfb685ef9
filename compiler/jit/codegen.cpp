// IR -> LLVM IR. One function per top-level expression, with the C ABI of
// compiler/jit/abi.h.
//
// Representation. Every IR expression has a static type, and at run time its
// value is either null or of that type: semantic analysis guarantees it for
// everything computed, and leaves that read the world (fields, records,
// captures, query and group results) check the dynamic type and bail out
// when it differs. So a value lives in SSA registers as
//   null flag (i1) + payload: i1 (bool), i64 (int, time, duration),
//   double (float), or ptr + i64 length (string),
// and a value whose static type is null has no payload at all.
//
// Semantics are those of runtime/interpreter.cpp, operator by operator; the
// comments below point out where a natural LLVM lowering would differ
// (NaN ordering, division traps, poison from out-of-range conversions).
// Payloads of null values are kept defined (zero or the empty string), and
// anything that could be poison is filtered through `select` before it can
// reach a branch, so no null input can make the code undefined.
#include "compiler/jit/codegen.h"

#include <fmt/format.h>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalAlias.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <limits>
#include <map>

#include "compiler/jit/abi.h"

namespace culprit::jit::detail {

std::string symbol_name(const std::string& prefix, size_t index) { return fmt::format("{}_{}", prefix, index); }

namespace {

using ir::Op;
using llvm::BasicBlock;
using llvm::IRBuilder;

// Thrown (and caught per expression, inside this file) when an expression
// uses something the generator does not handle; the expression is then
// left to the interpreter.
struct Unsupported {
  std::string why;
};

[[noreturn]] void unsupported(std::string why) { throw Unsupported{std::move(why)}; }

// A value in registers (see the file comment).
struct CV {
  Type t = Type::Null;
  llvm::Value* null = nullptr;  // i1: the value is null
  llvm::Value* v = nullptr;     // payload (absent for static type null)
  llvm::Value* n = nullptr;     // string length
};

bool int_like(Type t) { return t == Type::Int || t == Type::Time || t == Type::Duration; }

// Module-wide declarations: types, helpers, string constants.
class ModuleGen {
 public:
  ModuleGen(llvm::LLVMContext& c, llvm::Module& m, const ir::Catalog& cat, const ValueLayout& l)
      : C(c), M(m), catalog(cat), layout(l) {
    i1 = llvm::Type::getInt1Ty(C);
    i8 = llvm::Type::getInt8Ty(C);
    i32 = llvm::Type::getInt32Ty(C);
    i64 = llvm::Type::getInt64Ty(C);
    f64 = llvm::Type::getDoubleTy(C);
    ptr = llvm::PointerType::get(C, 0);
    voidt = llvm::Type::getVoidTy(C);
    // Must match CulpritJitValue in abi.h field for field.
    jv = llvm::StructType::create(C, {i32, i32, i64, f64, ptr, i64}, "CulpritJitValue");
    fn_type = llvm::FunctionType::get(i32, {ptr, ptr}, false);
    fields_type = llvm::StructType::get(C, {ptr, i64});  // CulpritJitFields, returned in two registers
  }

  // `readonly`: the helper writes no memory the generated code can see, so
  // repeated calls with the same arguments may be merged.
  llvm::FunctionCallee helper(const char* name, llvm::Type* ret, std::vector<llvm::Type*> args, bool readonly = false) {
    auto callee = M.getOrInsertFunction(name, llvm::FunctionType::get(ret, args, false));
    if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
      f->setDoesNotThrow();
      if (readonly) {
        f->setOnlyReadsMemory();
        f->setWillReturn();
      }
    }
    return callee;
  }

  // For a custom field name, the slot of that field in each event (or
  // symptom) kind, -1 where the kind lacks it: the schema lookup the
  // interpreter does at run time, done once here.
  llvm::GlobalVariable* slot_table(bool symptom, int32_t field) {
    auto key = std::make_pair(symptom, field);
    auto it = slot_tables_.find(key);
    if (it != slot_tables_.end()) return it->second;
    const auto& kinds = symptom ? catalog.symptom_kinds : catalog.event_kinds;
    std::vector<int32_t> slots;
    for (const auto& k : kinds) slots.push_back(k.slot(field));
    if (slots.empty()) slots.push_back(-1);
    auto* data = llvm::ConstantDataArray::get(C, slots);
    auto* g = new llvm::GlobalVariable(M, data->getType(), true, llvm::GlobalValue::PrivateLinkage, data,
                                       symptom ? ".symptom.slots" : ".event.slots");
    slot_tables_[key] = g;
    return g;
  }

  // A private constant holding `s` (not NUL-terminated; one byte for "").
  llvm::Constant* string_constant(const std::string& s) {
    auto it = strings_.find(s);
    if (it != strings_.end()) return it->second;
    auto* data = llvm::ConstantDataArray::getString(C, s.empty() ? std::string(1, '\0') : s, false);
    auto* g = new llvm::GlobalVariable(M, data->getType(), true, llvm::GlobalValue::PrivateLinkage, data, ".str");
    g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    g->setAlignment(llvm::Align(1));
    strings_[s] = g;
    return g;
  }

  llvm::LLVMContext& C;
  llvm::Module& M;
  llvm::Type *i1, *i8, *i32, *i64, *f64, *voidt;
  llvm::PointerType* ptr;
  llvm::StructType* jv;
  llvm::FunctionType* fn_type;
  llvm::StructType* fields_type;
  const ir::Catalog& catalog;
  const ValueLayout& layout;

 private:
  std::map<std::string, llvm::Constant*> strings_;
  std::map<std::pair<bool, int32_t>, llvm::GlobalVariable*> slot_tables_;
};

// Generates one function: `i32 name(ptr ctx, ptr out)`.
class FnGen {
 public:
  FnGen(ModuleGen& mg, llvm::Function* f, std::string name)
      : mg_(mg), F(f), name_(std::move(name)), B(mg.C), A(mg.C) {
    ctx_ = F->getArg(0);
    out_ = F->getArg(1);
    ctx_->setName("ctx");
    out_->setName("out");
    auto* entry = BasicBlock::Create(mg.C, "entry", F);
    A.SetInsertPoint(entry);  // allocas go first in the entry block
    auto* body = BasicBlock::Create(mg.C, "body", F);
    bail_ = BasicBlock::Create(mg.C, "bail", F);
    B.SetInsertPoint(bail_);
    B.CreateRet(B.getInt32(CULPRIT_JIT_BAIL));
    B.SetInsertPoint(body);
    body_ = body;
  }

  // Emits the body computing `e` into *out.
  void emit(const ir::Expr& e) {
    CV r = gen(e);
    to_jv(r, out_);
    B.CreateRet(B.getInt32(CULPRIT_JIT_OK));
    A.CreateBr(body_);
  }

  // Sub-functions created for query/group value expressions (erased with
  // this one when the expression turns out unsupported).
  std::vector<llvm::Function*> children;

 private:
  ModuleGen& mg_;
  llvm::Function* F;
  std::string name_;
  IRBuilder<> B;  // code
  IRBuilder<> A;  // allocas, in the entry block
  llvm::Value* ctx_;
  llvm::Value* out_;
  BasicBlock* bail_;
  BasicBlock* body_;

  // ------------------------------------------------------------ basics
  llvm::Value* local(llvm::Type* t, const char* name = "") { return A.CreateAlloca(t, nullptr, name); }
  llvm::Value* jv_slot() { return local(mg_.jv, "jv"); }
  llvm::Value* empty_string() { return mg_.string_constant(""); }
  llvm::Value* i32c(int64_t v) { return B.getInt32(static_cast<uint32_t>(v)); }
  llvm::Value* i64c(int64_t v) { return B.getInt64(static_cast<uint64_t>(v)); }
  llvm::Value* f64c(double v) { return llvm::ConstantFP::get(mg_.f64, v); }

  llvm::Type* payload_type(Type t) {
    switch (t) {
      case Type::Bool: return mg_.i1;
      case Type::Int:
      case Type::Time:
      case Type::Duration: return mg_.i64;
      case Type::Float: return mg_.f64;
      case Type::String: return mg_.ptr;
      case Type::Null: return nullptr;
    }
    return nullptr;
  }

  llvm::Value* zero(Type t) {
    switch (t) {
      case Type::Bool: return B.getFalse();
      case Type::Int:
      case Type::Time:
      case Type::Duration: return i64c(0);
      case Type::Float: return f64c(0.0);
      case Type::String: return empty_string();
      case Type::Null: return nullptr;
    }
    return nullptr;
  }

  CV null_of(Type t) {
    CV r;
    r.t = t;
    r.null = B.getTrue();
    r.v = zero(t);
    if (t == Type::String) r.n = i64c(0);
    return r;
  }

  CV make(Type t, llvm::Value* null, llvm::Value* v, llvm::Value* n = nullptr) {
    CV r;
    r.t = t;
    r.null = null;
    r.v = v;
    r.n = n;
    return r;
  }

  // Continues when `ok`, else bails out of the function.
  void check(llvm::Value* ok) {
    auto* cont = BasicBlock::Create(mg_.C, "ok", F);
    B.CreateCondBr(ok, cont, bail_);
    B.SetInsertPoint(cont);
  }

  llvm::Value* field_ptr(llvm::Value* slot, unsigned i) { return B.CreateStructGEP(mg_.jv, slot, i); }

  // Reads a CulpritJitValue filled by a helper as a value of static type
  // `t`; bails unless its dynamic type is null or `t`.
  CV from_jv(llvm::Value* slot, Type t) {
    llvm::Value* tag = B.CreateLoad(mg_.i32, field_ptr(slot, 0), "tag");
    llvm::Value* isnull = B.CreateICmpEQ(tag, i32c(0), "isnull");
    llvm::Value* ok = t == Type::Null ? isnull : B.CreateOr(isnull, B.CreateICmpEQ(tag, i32c(static_cast<int>(t))));
    check(ok);
    return payload_of_jv(slot, t, isnull);
  }

  // The payload of a CulpritJitValue whose dynamic type is already known to
  // be null or `t`. Null payloads are replaced by zeros/"" (see file comment).
  CV payload_of_jv(llvm::Value* slot, Type t, llvm::Value* isnull) {
    switch (t) {
      case Type::Null: return null_of(Type::Null);
      case Type::Bool: {
        llvm::Value* i = B.CreateLoad(mg_.i64, field_ptr(slot, 2));
        return make(t, isnull, B.CreateSelect(isnull, B.getFalse(), B.CreateICmpNE(i, i64c(0))));
      }
      case Type::Int:
      case Type::Time:
      case Type::Duration: {
        llvm::Value* i = B.CreateLoad(mg_.i64, field_ptr(slot, 2));
        return make(t, isnull, B.CreateSelect(isnull, i64c(0), i));
      }
      case Type::Float: {
        llvm::Value* f = B.CreateLoad(mg_.f64, field_ptr(slot, 3));
        return make(t, isnull, B.CreateSelect(isnull, f64c(0.0), f));
      }
      case Type::String: {
        llvm::Value* s = B.CreateLoad(mg_.ptr, field_ptr(slot, 4));
        llvm::Value* n = B.CreateLoad(mg_.i64, field_ptr(slot, 5));
        return make(t, isnull, B.CreateSelect(isnull, empty_string(), s), B.CreateSelect(isnull, i64c(0), n));
      }
    }
    unsupported("unknown type");
  }

  // Writes `r` as a CulpritJitValue (type 0 when null).
  // Writes the tag and the payload member of the static type only: every
  // reader (generated code and helpers alike) looks at a payload member
  // only under its tag, and a null's payload is never looked at (from_jv
  // selects it away). Writing all six members made these stores and their
  // address computations nearly a fifth of the catalog's optimized IR.
  void to_jv(const CV& r, llvm::Value* slot) {
    llvm::Value* tag = r.t == Type::Null ? i32c(0) : B.CreateSelect(r.null, i32c(0), i32c(static_cast<int>(r.t)));
    B.CreateStore(tag, field_ptr(slot, 0));
    if (r.t == Type::Bool) B.CreateStore(B.CreateZExt(r.v, mg_.i64), field_ptr(slot, 2));
    if (int_like(r.t)) B.CreateStore(r.v, field_ptr(slot, 2));
    if (r.t == Type::Float) B.CreateStore(r.v, field_ptr(slot, 3));
    if (r.t == Type::String) {
      B.CreateStore(r.v, field_ptr(slot, 4));
      B.CreateStore(r.n, field_ptr(slot, 5));
    }
  }

  // Truth for where/and/or/not: only a non-null true bool is true.
  llvm::Value* truthy(const CV& x) {
    if (x.t != Type::Bool) return B.getFalse();
    return B.CreateSelect(x.null, B.getFalse(), x.v);
  }

  llvm::Value* to_double(const CV& x) {
    if (x.t == Type::Float) return x.v;
    if (x.t == Type::Int) return B.CreateSIToFP(x.v, mg_.f64);
    unsupported(fmt::format("no numeric conversion from {}", type_name(x.t)));
  }

  // A value converted to static type `t` where the interpreter converts:
  // an int branch of a float `if`.
  CV convert(const CV& x, Type t) {
    if (x.t == t) return x;
    if (x.t == Type::Null) return null_of(t);
    if (t == Type::Float && x.t == Type::Int) return make(t, x.null, B.CreateSIToFP(x.v, mg_.f64));
    unsupported(fmt::format("cannot merge {} into {}", type_name(x.t), type_name(t)));
  }

  // Mutable storage for values that merge across branches; mem2reg turns
  // these back into registers.
  struct Var {
    Type t;
    llvm::Value *null = nullptr, *v = nullptr, *n = nullptr;
  };
  Var var(Type t) {
    Var x;
    x.t = t;
    x.null = local(mg_.i1, "var.null");
    if (t != Type::Null) x.v = local(payload_type(t), "var.v");
    if (t == Type::String) x.n = local(mg_.i64, "var.n");
    return x;
  }
  void store(const Var& x, const CV& val) {
    CV c = convert(val, x.t);
    B.CreateStore(c.null, x.null);
    if (x.v) B.CreateStore(c.v, x.v);
    if (x.n) B.CreateStore(c.n, x.n);
  }
  CV load(const Var& x) {
    CV r;
    r.t = x.t;
    r.null = B.CreateLoad(mg_.i1, x.null);
    if (x.v) r.v = B.CreateLoad(payload_type(x.t), x.v);
    if (x.n) r.n = B.CreateLoad(mg_.i64, x.n);
    return r;
  }

  BasicBlock* block(const char* name) { return BasicBlock::Create(mg_.C, name, F); }

  // ---------------------------------------------------------- helpers
  llvm::FunctionCallee h_event_field() { return mg_.helper("culprit_jit_event_field", mg_.voidt, {mg_.ptr, mg_.i32, mg_.i32, mg_.ptr}); }
  llvm::FunctionCallee h_symptom_field() { return mg_.helper("culprit_jit_symptom_field", mg_.voidt, {mg_.ptr, mg_.i32, mg_.i32, mg_.ptr}); }
  llvm::FunctionCallee h_event_fields() { return mg_.helper("culprit_jit_event_fields", mg_.fields_type, {mg_.ptr, mg_.i32}, true); }
  llvm::FunctionCallee h_symptom_fields() { return mg_.helper("culprit_jit_symptom_fields", mg_.fields_type, {mg_.ptr, mg_.i32}, true); }
  llvm::FunctionCallee h_capture() { return mg_.helper("culprit_jit_capture", mg_.voidt, {mg_.ptr, mg_.i32, mg_.ptr}); }
  llvm::FunctionCallee h_record() { return mg_.helper("culprit_jit_record", mg_.voidt, {mg_.ptr, mg_.i32, mg_.i32, mg_.ptr}); }
  llvm::FunctionCallee h_covered() { return mg_.helper("culprit_jit_covered", mg_.i32, {mg_.ptr, mg_.ptr, mg_.i64, mg_.ptr, mg_.i64}); }
  llvm::FunctionCallee h_is_node() { return mg_.helper("culprit_jit_is_node", mg_.i32, {mg_.ptr, mg_.ptr, mg_.i64}); }
  llvm::FunctionCallee h_coverage() { return mg_.helper("culprit_jit_coverage", mg_.f64, {mg_.ptr, mg_.ptr, mg_.i64}); }
  llvm::FunctionCallee h_str_compare() { return mg_.helper("culprit_jit_str_compare", mg_.i32, {mg_.ptr, mg_.i64, mg_.ptr, mg_.i64}, true); }
  llvm::FunctionCallee h_str_test() { return mg_.helper("culprit_jit_str_test", mg_.i32, {mg_.i32, mg_.ptr, mg_.i64, mg_.ptr, mg_.i64}, true); }
  llvm::FunctionCallee h_str_concat() { return mg_.helper("culprit_jit_str_concat", mg_.voidt, {mg_.ptr, mg_.ptr, mg_.i64, mg_.ptr, mg_.i64, mg_.ptr}); }
  llvm::FunctionCallee h_str_case() { return mg_.helper("culprit_jit_str_case", mg_.voidt, {mg_.ptr, mg_.i32, mg_.ptr, mg_.i64, mg_.ptr}); }
  llvm::FunctionCallee h_rank_node() { return mg_.helper("culprit_jit_rank_node", mg_.voidt, {mg_.ptr, mg_.i64, mg_.ptr}); }
  llvm::FunctionCallee h_host_node() { return mg_.helper("culprit_jit_host_node", mg_.voidt, {mg_.ptr, mg_.ptr, mg_.i64, mg_.ptr}); }
  llvm::FunctionCallee h_gaps() { return mg_.helper("culprit_jit_gaps", mg_.voidt, {mg_.ptr, mg_.ptr, mg_.i64, mg_.ptr}); }
  llvm::FunctionCallee h_str_trim() { return mg_.helper("culprit_jit_str_trim", mg_.voidt, {mg_.ptr, mg_.i64, mg_.ptr}); }
  llvm::FunctionCallee h_parse_int() { return mg_.helper("culprit_jit_parse_int", mg_.i32, {mg_.ptr, mg_.i64, mg_.i32, mg_.ptr}); }
  llvm::FunctionCallee h_parse_float() { return mg_.helper("culprit_jit_parse_float", mg_.i32, {mg_.ptr, mg_.i64, mg_.ptr}); }
  llvm::FunctionCallee h_parse_time() { return mg_.helper("culprit_jit_parse_time", mg_.i32, {mg_.ptr, mg_.i64, mg_.ptr}); }
  llvm::FunctionCallee h_duration() { return mg_.helper("culprit_jit_duration", mg_.i32, {mg_.ptr, mg_.i64, mg_.ptr}); }
  llvm::FunctionCallee h_to_text() { return mg_.helper("culprit_jit_to_text", mg_.voidt, {mg_.ptr, mg_.ptr, mg_.ptr}); }
  llvm::FunctionCallee h_interpolate() { return mg_.helper("culprit_jit_interpolate", mg_.voidt, {mg_.ptr, mg_.ptr, mg_.i32, mg_.ptr}); }
  llvm::FunctionCallee h_matches() { return mg_.helper("culprit_jit_matches", mg_.i32, {mg_.ptr, mg_.i32, mg_.ptr, mg_.i64}); }
  llvm::FunctionCallee h_query() { return mg_.helper("culprit_jit_query", mg_.i32, {mg_.ptr, mg_.i32, mg_.i32, mg_.ptr, mg_.ptr}); }
  llvm::FunctionCallee h_group() { return mg_.helper("culprit_jit_group", mg_.i32, {mg_.ptr, mg_.i32, mg_.ptr, mg_.ptr}); }

  // A string result of a helper that writes a CulpritJitValue (never null).
  CV string_from_jv(llvm::Value* slot) {
    llvm::Value* s = B.CreateLoad(mg_.ptr, field_ptr(slot, 4));
    llvm::Value* n = B.CreateLoad(mg_.i64, field_ptr(slot, 5));
    return make(Type::String, B.getFalse(), s, n);
  }

  // A compiled value expression (query max/min, distinct, values) as an
  // internal function of the same ABI; its address goes to the helper.
  llvm::Function* sub_function(const ir::Expr& e) {
    std::string name = fmt::format("{}_k{}", name_, children.size());
    auto* f = llvm::Function::Create(mg_.fn_type, llvm::GlobalValue::InternalLinkage, name, mg_.M);
    f->setDoesNotThrow();
    children.push_back(f);
    FnGen sub(mg_, f, name);
    try {
      sub.emit(e);
    } catch (...) {
      children.insert(children.end(), sub.children.begin(), sub.children.end());
      throw;
    }
    children.insert(children.end(), sub.children.begin(), sub.children.end());
    return f;
  }

  // ------------------------------------------------------- expressions
  CV gen(const ir::Expr& e) {
    switch (e.op) {
      case Op::Const: return gen_const(e);
      case Op::Capture: {
        llvm::Value* slot = jv_slot();
        B.CreateCall(h_capture(), {ctx_, i32c(e.a), slot});
        return from_jv(slot, e.type);
      }
      case Op::EventField:
      case Op::SymptomField: {
        if (mg_.layout.usable && e.b >= 0) return field_in_place(e.op == Op::SymptomField, e.a, e.b, e.type);
        llvm::Value* slot = jv_slot();
        B.CreateCall(e.op == Op::EventField ? h_event_field() : h_symptom_field(), {ctx_, i32c(e.a), i32c(e.b), slot});
        return from_jv(slot, e.type);
      }
      case Op::Terminal:
      case Op::Outcome:
      case Op::Workload: {
        int record = e.op == Op::Terminal ? CULPRIT_JIT_TERMINAL : e.op == Op::Outcome ? CULPRIT_JIT_OUTCOME : CULPRIT_JIT_WORKLOAD;
        llvm::Value* slot = jv_slot();
        B.CreateCall(h_record(), {ctx_, i32c(record), i32c(e.a), slot});
        return from_jv(slot, e.type);
      }
      case Op::Neg: {
        CV k = gen(kid(e, 0));
        if (k.t == Type::Null) return null_of(e.type);
        if (k.t != e.type) unsupported("neg changes type");
        if (k.t == Type::Float) return make(k.t, k.null, B.CreateFNeg(k.v));
        if (int_like(k.t)) return make(k.t, k.null, B.CreateSub(i64c(0), k.v));  // wraps, like the interpreter
        unsupported("neg of this type");
      }
      case Op::Not: {
        CV k = gen(kid(e, 0));
        return make(Type::Bool, B.getFalse(), B.CreateNot(truthy(k)));
      }
      case Op::Add:
      case Op::Sub:
      case Op::Mul: return gen_arith(e);
      case Op::Mod:
      case Op::Shl:
      case Op::Shr:
      case Op::BitAnd:
      case Op::BitXor:
      case Op::BitOr: return gen_intop(e);
      case Op::Eq:
      case Op::Ne:
      case Op::Lt:
      case Op::Le:
      case Op::Gt:
      case Op::Ge: {
        // Both sides are evaluated before the null test, as interpreted.
        CV a = gen(kid(e, 0));
        CV b = gen(kid(e, 1));
        if (a.t == Type::Null || b.t == Type::Null) return make(Type::Bool, B.getFalse(), B.getFalse());
        llvm::Value* r = compare(a, b, e.op);
        return make(Type::Bool, B.getFalse(), B.CreateSelect(B.CreateOr(a.null, b.null), B.getFalse(), r));
      }
      case Op::And:
      case Op::Or: return gen_logic(e);
      case Op::Matches: {
        CV k = gen(kid(e, 0));
        if (k.t == Type::Null) return make(Type::Bool, B.getFalse(), B.getFalse());
        if (k.t != Type::String) unsupported("matches on a non-string");
        // A null operand is never matched: the call sees "" and the select drops its answer.
        llvm::Value* m = B.CreateCall(h_matches(), {ctx_, i32c(e.a), k.v, k.n});
        return make(Type::Bool, B.getFalse(), B.CreateSelect(k.null, B.getFalse(), B.CreateICmpNE(m, i32c(0))));
      }
      case Op::IsNull:
      case Op::IsNotNull: {
        CV k = gen(kid(e, 0));
        return make(Type::Bool, B.getFalse(), e.op == Op::IsNull ? k.null : B.CreateNot(k.null));
      }
      case Op::In:
      case Op::NotIn: return gen_in(e);
      case Op::Call: return gen_call(e);
      case Op::QueryExists:
      case Op::QueryNone:
      case Op::QueryCount:
      case Op::QueryNodes:
      case Op::QueryMax:
      case Op::QueryMin: {
        bool valued = e.op == Op::QueryMax || e.op == Op::QueryMin;
        llvm::Value* fn = valued ? static_cast<llvm::Value*>(sub_function(kid(e, 0)))
                                 : static_cast<llvm::Value*>(llvm::ConstantPointerNull::get(mg_.ptr));
        llvm::Value* slot = jv_slot();
        llvm::Value* status = B.CreateCall(h_query(), {ctx_, i32c(static_cast<int>(e.op)), i32c(e.a), fn, slot});
        check(B.CreateICmpEQ(status, i32c(CULPRIT_JIT_OK)));
        return from_jv(slot, e.type);
      }
      case Op::GroupCount:
      case Op::GroupDistinct:
      case Op::GroupValues:
      case Op::GroupFirstTs:
      case Op::GroupLastTs: {
        bool valued = e.op == Op::GroupDistinct || e.op == Op::GroupValues;
        llvm::Value* fn = valued ? static_cast<llvm::Value*>(sub_function(kid(e, 0)))
                                 : static_cast<llvm::Value*>(llvm::ConstantPointerNull::get(mg_.ptr));
        llvm::Value* slot = jv_slot();
        llvm::Value* status = B.CreateCall(h_group(), {ctx_, i32c(static_cast<int>(e.op)), fn, slot});
        check(B.CreateICmpEQ(status, i32c(CULPRIT_JIT_OK)));
        return from_jv(slot, e.type);
      }
      case Op::Interpolate: {
        size_t n = e.kids.size();
        auto* arr_t = llvm::ArrayType::get(mg_.jv, std::max<size_t>(n, 1));
        llvm::Value* arr = local(arr_t, "parts");
        for (size_t i = 0; i < n; ++i) {
          CV k = gen(e.kids[i]);
          to_jv(k, B.CreateConstInBoundsGEP2_32(arr_t, arr, 0, static_cast<unsigned>(i)));
        }
        llvm::Value* slot = jv_slot();
        B.CreateCall(h_interpolate(), {ctx_, arr, i32c(static_cast<int64_t>(n)), slot});
        return string_from_jv(slot);
      }
    }
    unsupported(fmt::format("operator {}", static_cast<int>(e.op)));
  }

  // A custom field read in place: one (mergeable) helper call for the item's
  // field array, the schema slot from a constant table, then the
  // culprit::Value's type byte and payload at the offsets of mg_.layout.
  CV field_in_place(bool symptom, int32_t slot, int32_t field, Type t) {
    const ValueLayout& L = mg_.layout;
    llvm::Value* r = B.CreateCall(symptom ? h_symptom_fields() : h_event_fields(), {ctx_, i32c(slot)});
    llvm::Value* values = B.CreateExtractValue(r, 0);
    llvm::Value* kc = B.CreateExtractValue(r, 1);
    llvm::Value* kind = B.CreateLShr(kc, 32);
    llvm::Value* count = B.CreateAnd(kc, i64c(0xffffffff));
    llvm::GlobalVariable* table = mg_.slot_table(symptom, field);
    uint64_t kinds = llvm::cast<llvm::ArrayType>(table->getValueType())->getNumElements();
    llvm::Value* kind_ok = B.CreateICmpULT(kind, i64c(static_cast<int64_t>(kinds)));
    llvm::Value* index = B.CreateSelect(kind_ok, kind, i64c(0));
    llvm::Value* fs = B.CreateSExt(
        B.CreateLoad(mg_.i32, B.CreateInBoundsGEP(table->getValueType(), table, {i64c(0), index})), mg_.i64);
    llvm::Value* present = B.CreateAnd(B.CreateAnd(B.CreateIsNotNull(values), kind_ok),
                                       B.CreateAnd(B.CreateICmpSGE(fs, i64c(0)), B.CreateICmpSLT(fs, count)));
    Var v = var(t);
    store(v, null_of(t));
    auto* read = block("field.read");
    auto* done = block("field.done");
    B.CreateCondBr(present, read, done);
    B.SetInsertPoint(read);
    llvm::Value* base = B.CreateInBoundsGEP(mg_.i8, values, B.CreateMul(fs, i64c(L.size)));
    auto at = [&](int32_t offset) { return B.CreateInBoundsGEP(mg_.i8, base, i64c(offset)); };
    llvm::Value* tag = B.CreateZExt(B.CreateLoad(mg_.i8, at(L.type)), mg_.i32);
    llvm::Value* isnull = B.CreateICmpEQ(tag, i32c(0));
    check(t == Type::Null ? isnull : B.CreateOr(isnull, B.CreateICmpEQ(tag, i32c(static_cast<int>(t)))));
    CV x;
    switch (t) {
      case Type::Null: x = null_of(t); break;
      case Type::Bool:
        x = make(t, isnull, B.CreateSelect(isnull, B.getFalse(), B.CreateICmpNE(B.CreateLoad(mg_.i8, at(L.boolean)), B.getInt8(0))));
        break;
      case Type::Int:
      case Type::Time:
      case Type::Duration: x = make(t, isnull, B.CreateSelect(isnull, i64c(0), B.CreateLoad(mg_.i64, at(L.integer)))); break;
      case Type::Float: x = make(t, isnull, B.CreateSelect(isnull, f64c(0.0), B.CreateLoad(mg_.f64, at(L.real)))); break;
      case Type::String:
        x = make(t, isnull, B.CreateSelect(isnull, empty_string(), B.CreateLoad(mg_.ptr, at(L.string_data))),
                 B.CreateSelect(isnull, i64c(0), B.CreateLoad(mg_.i64, at(L.string_size))));
        break;
    }
    store(v, x);
    B.CreateBr(done);
    B.SetInsertPoint(done);
    return load(v);
  }

  static const ir::Expr& kid(const ir::Expr& e, size_t i) {
    if (i >= e.kids.size()) unsupported("missing operand");
    return e.kids[i];
  }

  CV gen_const(const ir::Expr& e) {
    const Value& c = e.constant;
    if (c.type != e.type) unsupported("constant of another type than its expression");
    switch (c.type) {
      case Type::Null: return null_of(Type::Null);
      case Type::Bool: return make(c.type, B.getFalse(), B.getInt1(c.b));
      case Type::Int:
      case Type::Time:
      case Type::Duration: return make(c.type, B.getFalse(), i64c(c.i));
      case Type::Float: return make(c.type, B.getFalse(), f64c(c.f));
      case Type::String:
        return make(c.type, B.getFalse(), mg_.string_constant(c.s), i64c(static_cast<int64_t>(c.s.size())));
    }
    unsupported("constant type");
  }

  CV gen_arith(const ir::Expr& e) {
    CV a = gen(kid(e, 0));
    CV b = gen(kid(e, 1));
    if (a.t == Type::Null || b.t == Type::Null || e.type == Type::Null) return null_of(e.type);
    llvm::Value* null = B.CreateOr(a.null, b.null);
    if (e.type == Type::String) {
      if (e.op != Op::Add || a.t != Type::String || b.t != Type::String) unsupported("string arithmetic");
      Var r = var(Type::String);
      store(r, null_of(Type::String));
      auto* concat = block("concat");
      auto* done = block("concat.done");
      B.CreateCondBr(null, done, concat);
      B.SetInsertPoint(concat);
      llvm::Value* slot = jv_slot();
      B.CreateCall(h_str_concat(), {ctx_, a.v, a.n, b.v, b.n, slot});
      store(r, string_from_jv(slot));
      B.CreateBr(done);
      B.SetInsertPoint(done);
      return load(r);
    }
    if (e.type == Type::Float) {
      llvm::Value* x = to_double(a);
      llvm::Value* y = to_double(b);
      llvm::Value* r = e.op == Op::Add ? B.CreateFAdd(x, y) : e.op == Op::Sub ? B.CreateFSub(x, y) : B.CreateFMul(x, y);
      // Non-finite results are null (inf, nan); NaN compares false here too.
      llvm::Value* fabs = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, r);
      llvm::Value* finite = B.CreateFCmpOLT(fabs, f64c(std::numeric_limits<double>::infinity()));
      llvm::Value* isnull = B.CreateOr(null, B.CreateNot(finite));
      return make(Type::Float, isnull, B.CreateSelect(isnull, f64c(0.0), r));
    }
    if (int_like(e.type)) {
      if (!int_like(a.t) || !int_like(b.t)) unsupported("mixed arithmetic");
      // Two's complement wrap-around: plain add/sub/mul without nsw.
      llvm::Value* r = e.op == Op::Add ? B.CreateAdd(a.v, b.v) : e.op == Op::Sub ? B.CreateSub(a.v, b.v) : B.CreateMul(a.v, b.v);
      return make(e.type, null, r);
    }
    unsupported(fmt::format("arithmetic giving {}", type_name(e.type)));
  }

  CV gen_intop(const ir::Expr& e) {
    CV a = gen(kid(e, 0));
    CV b = gen(kid(e, 1));
    if (a.t == Type::Null || b.t == Type::Null) return null_of(e.type);
    if (a.t != Type::Int || b.t != Type::Int || e.type != Type::Int) unsupported("integer operator on non-integers");
    llvm::Value* null = B.CreateOr(a.null, b.null);
    llvm::Value *x = a.v, *y = b.v;
    switch (e.op) {
      case Op::Mod: {
        // x86 idiv traps on a zero divisor and on INT64_MIN % -1; both are
        // null in the language, so divide by 1 instead and drop the result.
        llvm::Value* bad = B.CreateOr(B.CreateICmpEQ(y, i64c(0)),
                                      B.CreateAnd(B.CreateICmpEQ(x, i64c(INT64_MIN)), B.CreateICmpEQ(y, i64c(-1))));
        llvm::Value* safe = B.CreateSelect(bad, i64c(1), y);
        llvm::Value* isnull = B.CreateOr(null, bad);
        return make(Type::Int, isnull, B.CreateSelect(isnull, i64c(0), B.CreateSRem(x, safe)));
      }
      case Op::Shl:
      case Op::Shr: {
        // Counts outside 0..63 are null; masking keeps LLVM's shift defined.
        llvm::Value* bad = B.CreateICmpUGT(y, i64c(63));
        llvm::Value* amount = B.CreateAnd(y, i64c(63));
        llvm::Value* r = e.op == Op::Shl ? B.CreateShl(x, amount) : B.CreateLShr(x, amount);
        llvm::Value* isnull = B.CreateOr(null, bad);
        return make(Type::Int, isnull, B.CreateSelect(isnull, i64c(0), r));
      }
      case Op::BitAnd: return make(Type::Int, null, B.CreateAnd(x, y));
      case Op::BitXor: return make(Type::Int, null, B.CreateXor(x, y));
      case Op::BitOr: return make(Type::Int, null, B.CreateOr(x, y));
      default: break;
    }
    unsupported("integer operator");
  }

  // The interpreter's compare(a, b) <op> 0, for two non-null values.
  llvm::Value* compare(const CV& a, const CV& b, Op op) {
    if (a.t == Type::String && b.t == Type::String) {
      llvm::Value* c = B.CreateCall(h_str_compare(), {a.v, a.n, b.v, b.n});
      switch (op) {
        case Op::Eq: return B.CreateICmpEQ(c, i32c(0));
        case Op::Ne: return B.CreateICmpNE(c, i32c(0));
        case Op::Lt: return B.CreateICmpSLT(c, i32c(0));
        case Op::Le: return B.CreateICmpSLE(c, i32c(0));
        case Op::Gt: return B.CreateICmpSGT(c, i32c(0));
        default: return B.CreateICmpSGE(c, i32c(0));
      }
    }
    if ((a.t == Type::Float || b.t == Type::Float) && (a.t == Type::Float || a.t == Type::Int) &&
        (b.t == Type::Float || b.t == Type::Int)) {
      // compare() is x < y ? -1 : x > y ? 1 : 0, so NaN compares equal to
      // everything; spell each operator through olt/ogt to keep that.
      llvm::Value* x = to_double(a);
      llvm::Value* y = to_double(b);
      llvm::Value* lt = B.CreateFCmpOLT(x, y);
      llvm::Value* gt = B.CreateFCmpOGT(x, y);
      switch (op) {
        case Op::Eq: return B.CreateNot(B.CreateOr(lt, gt));
        case Op::Ne: return B.CreateOr(lt, gt);
        case Op::Lt: return lt;
        case Op::Le: return B.CreateNot(gt);
        case Op::Gt: return gt;
        default: return B.CreateNot(lt);
      }
    }
    if (a.t == Type::Bool && b.t == Type::Bool) {
      // false < true, as compare() orders bools.
      switch (op) {
        case Op::Eq: return B.CreateICmpEQ(a.v, b.v);
        case Op::Ne: return B.CreateICmpNE(a.v, b.v);
        case Op::Lt: return B.CreateICmpULT(a.v, b.v);
        case Op::Le: return B.CreateICmpULE(a.v, b.v);
        case Op::Gt: return B.CreateICmpUGT(a.v, b.v);
        default: return B.CreateICmpUGE(a.v, b.v);
      }
    }
    if (int_like(a.t) && int_like(b.t)) {
      switch (op) {
        case Op::Eq: return B.CreateICmpEQ(a.v, b.v);
        case Op::Ne: return B.CreateICmpNE(a.v, b.v);
        case Op::Lt: return B.CreateICmpSLT(a.v, b.v);
        case Op::Le: return B.CreateICmpSLE(a.v, b.v);
        case Op::Gt: return B.CreateICmpSGT(a.v, b.v);
        default: return B.CreateICmpSGE(a.v, b.v);
      }
    }
    unsupported(fmt::format("comparison of {} with {}", type_name(a.t), type_name(b.t)));
  }

  CV gen_logic(const ir::Expr& e) {
    bool is_and = e.op == Op::And;
    CV a = gen(kid(e, 0));
    llvm::Value* ta = truthy(a);
    BasicBlock* from = B.GetInsertBlock();
    auto* rhs = block(is_and ? "and.rhs" : "or.rhs");
    auto* done = block(is_and ? "and.done" : "or.done");
    if (is_and) B.CreateCondBr(ta, rhs, done);
    else B.CreateCondBr(ta, done, rhs);
    B.SetInsertPoint(rhs);
    CV b = gen(kid(e, 1));
    llvm::Value* tb = truthy(b);
    BasicBlock* rhs_end = B.GetInsertBlock();
    B.CreateBr(done);
    B.SetInsertPoint(done);
    auto* phi = B.CreatePHI(mg_.i1, 2);
    phi->addIncoming(is_and ? B.getFalse() : B.getTrue(), from);
    phi->addIncoming(tb, rhs_end);
    return make(Type::Bool, B.getFalse(), phi);
  }

  CV gen_in(const ir::Expr& e) {
    bool in = e.op == Op::In;
    CV v = gen(kid(e, 0));
    // A null value is in nothing and not-in nothing; the list is then not evaluated.
    if (v.t == Type::Null) return make(Type::Bool, B.getFalse(), B.getFalse());
    auto* done = block("in.done");
    auto* found = block("in.found");
    auto* missing = block("in.missing");
    BasicBlock* null_from = B.GetInsertBlock();
    B.CreateCondBr(v.null, done, e.kids.size() > 1 ? block("in.elem") : missing);
    B.SetInsertPoint(llvm::cast<llvm::BranchInst>(null_from->getTerminator())->getSuccessor(1));
    for (size_t i = 1; i < e.kids.size(); ++i) {
      CV o = gen(e.kids[i]);
      llvm::Value* eq = B.getFalse();
      if (o.t != Type::Null) {
        if ((v.t == Type::String) != (o.t == Type::String)) unsupported("'in' between a string and a non-string");
        eq = B.CreateSelect(o.null, B.getFalse(), compare(v, o, Op::Eq));
      }
      // Stop at the first element found, as the interpreter does.
      auto* next = i + 1 < e.kids.size() ? block("in.elem") : missing;
      B.CreateCondBr(eq, found, next);
      B.SetInsertPoint(next);
    }
    B.CreateBr(done);
    B.SetInsertPoint(found);
    B.CreateBr(done);
    B.SetInsertPoint(done);
    auto* phi = B.CreatePHI(mg_.i1, 3);
    phi->addIncoming(B.getFalse(), null_from);
    phi->addIncoming(B.getInt1(in), found);
    phi->addIncoming(B.getInt1(!in), missing);
    return make(Type::Bool, B.getFalse(), phi);
  }

  // Calls a string helper only when `x` is not null; the result is null otherwise.
  CV parse_string(const CV& x, Type result, int base) {
    llvm::Value* tmp = local(result == Type::Float ? mg_.f64 : mg_.i64, "parsed");
    llvm::Value* ok = base == 0 ? B.CreateCall(h_parse_float(), {x.v, x.n, tmp})
                                : B.CreateCall(h_parse_int(), {x.v, x.n, i32c(base), tmp});
    // x.v/x.n are "" and 0 when x is null, which never parses: no branch needed.
    llvm::Value* isnull = B.CreateOr(x.null, B.CreateICmpEQ(ok, i32c(0)));
    llvm::Value* val = B.CreateLoad(result == Type::Float ? mg_.f64 : mg_.i64, tmp);
    return make(result, isnull, B.CreateSelect(isnull, zero(result), val));
  }

  CV gen_call(const ir::Expr& e) {
    using ir::Builtin;
    auto fn = static_cast<Builtin>(e.a);
    switch (fn) {
      case Builtin::Int: {
        CV k = gen(kid(e, 0));
        if (k.t == Type::Null) return null_of(Type::Int);
        if (k.t == Type::Int) return k;
        if (k.t == Type::Float) {
          // In range means finite and |f| < 9.2e18; fptosi of anything else
          // is poison, which the select keeps away from the result.
          llvm::Value* fabs = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, k.v);
          llvm::Value* ok = B.CreateFCmpOLT(fabs, f64c(9.2e18));
          llvm::Value* isnull = B.CreateOr(k.null, B.CreateNot(ok));
          return make(Type::Int, isnull, B.CreateSelect(isnull, i64c(0), B.CreateFPToSI(k.v, mg_.i64)));
        }
        if (k.t == Type::String) return parse_string(k, Type::Int, 10);
        unsupported("int() of this type");
      }
      case Builtin::Hex: {
        CV k = gen(kid(e, 0));
        if (k.t == Type::Null) return null_of(Type::Int);
        if (k.t == Type::Int) return k;
        if (k.t == Type::String) return parse_string(k, Type::Int, 16);
        unsupported("hex() of this type");
      }
      case Builtin::Float: {
        CV k = gen(kid(e, 0));
        if (k.t == Type::Null) return null_of(Type::Float);
        if (k.t == Type::Float) return k;
        if (k.t == Type::Int) return make(Type::Float, k.null, B.CreateSIToFP(k.v, mg_.f64));
        if (k.t == Type::String) return parse_string(k, Type::Float, 0);
        unsupported("float() of this type");
      }
      case Builtin::Duration: {
        CV k = gen(kid(e, 0));
        if (e.kids.size() < 2 || e.kids[1].op != Op::Const || e.kids[1].constant.type != Type::String)
          unsupported("duration() without a constant unit");
        const std::string& unit = e.kids[1].constant.s;
        int64_t mul = unit == "ns" ? 1 : unit == "us" ? 1000 : unit == "ms" ? 1000000 : unit == "s" ? 1000000000LL
                    : unit == "m" ? 60000000000LL : 3600000000000LL;
        if (k.t == Type::Null) return null_of(Type::Duration);
        llvm::Value* arg = jv_slot();
        to_jv(k, arg);
        llvm::Value* tmp = local(mg_.i64, "ns");
        llvm::Value* ok = B.CreateCall(h_duration(), {arg, i64c(mul), tmp});
        llvm::Value* isnull = B.CreateICmpEQ(ok, i32c(0));
        return make(Type::Duration, isnull, B.CreateSelect(isnull, i64c(0), B.CreateLoad(mg_.i64, tmp)));
      }
      case Builtin::Seconds: {
        CV k = gen(kid(e, 0));
        if (k.t == Type::Null) return null_of(Type::Float);
        if (!int_like(k.t)) unsupported("seconds() of this type");
        return make(Type::Float, k.null, B.CreateFDiv(B.CreateSIToFP(k.v, mg_.f64), f64c(1e9)));
      }
      case Builtin::Lower:
      case Builtin::Upper:
      case Builtin::Trim: {
        CV k = gen(kid(e, 0));
        if (k.t == Type::Null) return null_of(Type::String);
        if (k.t != Type::String) unsupported("string function of a non-string");
        llvm::Value* slot = jv_slot();
        if (fn == Builtin::Trim) B.CreateCall(h_str_trim(), {k.v, k.n, slot});
        else B.CreateCall(h_str_case(), {ctx_, i32c(fn == Builtin::Upper), k.v, k.n, slot});
        CV r = string_from_jv(slot);
        r.null = k.null;
        return r;
      }
      case Builtin::Len: {
        CV k = gen(kid(e, 0));
        if (k.t == Type::Null) return null_of(Type::Int);
        if (k.t != Type::String) unsupported("len() of a non-string");
        return make(Type::Int, k.null, k.n);
      }
      case Builtin::Contains:
      case Builtin::StartsWith:
      case Builtin::EndsWith: {
        CV a = gen(kid(e, 0));
        CV b = gen(kid(e, 1));
        if (a.t == Type::Null || b.t == Type::Null) return null_of(Type::Bool);
        if (a.t != Type::String || b.t != Type::String) unsupported("string test of a non-string");
        int which = fn == Builtin::Contains ? CULPRIT_JIT_CONTAINS : fn == Builtin::StartsWith ? CULPRIT_JIT_STARTS_WITH
                                                                                                 : CULPRIT_JIT_ENDS_WITH;
        llvm::Value* r = B.CreateCall(h_str_test(), {i32c(which), a.v, a.n, b.v, b.n});
        llvm::Value* isnull = B.CreateOr(a.null, b.null);
        return make(Type::Bool, isnull, B.CreateSelect(isnull, B.getFalse(), B.CreateICmpNE(r, i32c(0))));
      }
      case Builtin::Str: {
        CV k = gen(kid(e, 0));
        llvm::Value* arg = jv_slot();
        to_jv(k, arg);
        llvm::Value* slot = jv_slot();
        B.CreateCall(h_to_text(), {ctx_, arg, slot});
        return string_from_jv(slot);
      }
      case Builtin::Coalesce: {
        // The first non-null argument; later ones are not evaluated.
        Var r = var(e.type);
        auto* done = block("coalesce.done");
        for (const auto& k : e.kids) {
          CV c = gen(k);
          if (c.t == Type::Null) continue;  // always null: try the next one
          if (c.t != e.type) unsupported("coalesce of mixed types");
          store(r, c);
          auto* next = block("coalesce.next");
          B.CreateCondBr(c.null, next, done);
          B.SetInsertPoint(next);
        }
        store(r, null_of(e.type));
        B.CreateBr(done);
        B.SetInsertPoint(done);
        return load(r);
      }
      case Builtin::If: {
        CV c = gen(kid(e, 0));
        llvm::Value* t = truthy(c);
        Var r = var(e.type);
        auto* then_bb = block("if.then");
        auto* else_bb = block("if.else");
        auto* done = block("if.done");
        B.CreateCondBr(t, then_bb, else_bb);
        B.SetInsertPoint(then_bb);
        store(r, gen(kid(e, 1)));
        B.CreateBr(done);
        B.SetInsertPoint(else_bb);
        store(r, gen(kid(e, 2)));
        B.CreateBr(done);
        B.SetInsertPoint(done);
        return load(r);
      }
      case Builtin::Covered: {
        if (e.kids.size() < 2 || e.kids[0].op != Op::Const || e.kids[0].constant.type != Type::String)
          unsupported("covered() without a constant source");
        const std::string& src = e.kids[0].constant.s;
        CV node = gen(kid(e, 1));
        if (node.t == Type::Null) return make(Type::Bool, B.getFalse(), B.getFalse());
        if (node.t != Type::String) unsupported("covered() of a non-string node");
        llvm::Value* r = B.CreateCall(h_covered(), {ctx_, mg_.string_constant(src), i64c(static_cast<int64_t>(src.size())),
                                                    node.v, node.n});
        return make(Type::Bool, B.getFalse(), B.CreateSelect(node.null, B.getFalse(), B.CreateICmpNE(r, i32c(0))));
      }
      case Builtin::IsNode: {
        CV name = gen(kid(e, 0));
        if (name.t == Type::Null) return make(Type::Bool, B.getFalse(), B.getFalse());
        if (name.t != Type::String) unsupported("is_node() of a non-string");
        llvm::Value* r = B.CreateCall(h_is_node(), {ctx_, name.v, name.n});
        return make(Type::Bool, B.getFalse(), B.CreateSelect(name.null, B.getFalse(), B.CreateICmpNE(r, i32c(0))));
      }
      case Builtin::RankNode: {
        CV r = gen(kid(e, 0));
        if (r.t == Type::Null) return null_of(Type::String);
        if (r.t != Type::Int) unsupported("rank_node() of a non-integer");
        llvm::Value* slot = jv_slot();
        B.CreateCall(h_rank_node(), {ctx_, r.v, slot});
        llvm::Value* isnull = B.CreateOr(r.null, B.CreateICmpEQ(B.CreateLoad(mg_.i32, field_ptr(slot, 0)), i32c(0)));
        return payload_of_jv(slot, Type::String, isnull);
      }
      case Builtin::Gaps:
      case Builtin::HostNode: {
        CV k = gen(kid(e, 0));
        if (k.t == Type::Null) return null_of(Type::String);
        if (k.t != Type::String) unsupported("string function of a non-string");
        llvm::Value* slot = jv_slot();
        B.CreateCall(fn == Builtin::Gaps ? h_gaps() : h_host_node(), {ctx_, k.v, k.n, slot});
        llvm::Value* isnull = B.CreateOr(k.null, B.CreateICmpEQ(B.CreateLoad(mg_.i32, field_ptr(slot, 0)), i32c(0)));
        return payload_of_jv(slot, Type::String, isnull);
      }
      case Builtin::Coverage: {
        if (e.kids.empty() || e.kids[0].op != Op::Const || e.kids[0].constant.type != Type::String)
          unsupported("coverage() without a constant source");
        const std::string& src = e.kids[0].constant.s;
        llvm::Value* r = B.CreateCall(h_coverage(), {ctx_, mg_.string_constant(src), i64c(static_cast<int64_t>(src.size()))});
        return make(Type::Float, B.getFalse(), r);
      }
      case Builtin::Time: {
        CV k = gen(kid(e, 0));
        if (k.t == Type::Null) return null_of(Type::Time);
        if (k.t != Type::String) unsupported("time() of this type");
        llvm::Value* tmp = local(mg_.i64, "instant");
        // k.v/k.n are "" and 0 when k is null, which never parses.
        llvm::Value* ok = B.CreateCall(h_parse_time(), {k.v, k.n, tmp});
        llvm::Value* isnull = B.CreateOr(k.null, B.CreateICmpEQ(ok, i32c(0)));
        return make(Type::Time, isnull, B.CreateSelect(isnull, i64c(0), B.CreateLoad(mg_.i64, tmp)));
      }
    }
    unsupported(fmt::format("builtin {}", e.a));
  }
};

std::string where_of(const ir::Expr& e) {
  if (e.where.file) return fmt::format("{}:{}", e.where.file->path, e.where.line);
  return "?";
}

// Drops a half-generated function and its value sub-functions: the parent
// first (it holds the only uses of its children), then each child before
// the grandchildren it calls, in creation order.
void erase(llvm::Function* f, const std::vector<llvm::Function*>& children) {
  f->eraseFromParent();
  for (auto* c : children) c->eraseFromParent();
}

}  // namespace

Generated generate(llvm::LLVMContext& context, const ir::Catalog& catalog, const std::vector<const ir::Expr*>& exprs,
                   const std::vector<size_t>& indices, const std::vector<std::vector<size_t>>& copies,
                   const std::string& module_name, const std::string& prefix, const ValueLayout& layout,
                   std::string& error) {
  Generated out;
  auto module = std::make_unique<llvm::Module>(module_name, context);
  ModuleGen mg(context, *module, catalog, layout);
  out.compiled.assign(exprs.size(), false);
  std::vector<std::pair<size_t, std::string>> failed;  // by index, reported in index order
  for (size_t i : indices) {
    std::string name = symbol_name(prefix, i);
    auto* f = llvm::Function::Create(mg.fn_type, llvm::GlobalValue::ExternalLinkage, name, *module);
    f->setDoesNotThrow();
    std::vector<llvm::Function*> children;
    std::string why;
    try {
      FnGen g(mg, f, name);
      try {
        g.emit(*exprs[i]);
      } catch (...) {
        children = g.children;
        throw;
      }
    } catch (const Unsupported& u) {
      why = u.why.empty() ? "unsupported" : u.why;
    } catch (const std::exception& x) {
      why = x.what();
    }
    const std::vector<size_t> none;
    const std::vector<size_t>& same = i < copies.size() ? copies[i] : none;
    if (why.empty()) {
      out.compiled[i] = true;
      for (size_t j : same) {
        llvm::GlobalAlias::create(llvm::GlobalValue::ExternalLinkage, symbol_name(prefix, j), f);
        out.compiled[j] = true;
      }
    } else {
      erase(f, children);
      failed.emplace_back(i, fmt::format("{}: {}", where_of(*exprs[i]), why));
      for (size_t j : same) failed.emplace_back(j, fmt::format("{}: {}", where_of(*exprs[j]), why));
    }
  }
  std::sort(failed.begin(), failed.end());
  for (auto& [index, message] : failed) out.not_compiled.push_back(std::move(message));
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os)) {
    os.flush();
    error = "generated LLVM IR does not verify: " + problems.substr(0, 2000);
    return out;
  }
  out.module = std::move(module);
  return out;
}

}  // namespace culprit::jit::detail
