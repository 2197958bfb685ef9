// The C ABI between JIT-compiled rule code and the runtime that hosts it.
//
// Generated code (compiler/jit/codegen.cpp) never sees a C++ type: every
// compiled expression is a function
//
//     int32_t fn(void* ctx, CulpritJitValue* out);
//
// that returns CULPRIT_JIT_OK with its result in `*out`, or CULPRIT_JIT_BAIL
// when it met something its static types did not promise (a field holding a
// value of another type than the IR says). A bail has no side effect: the
// caller then interprets the same expression, so the result is always the
// interpreter's.
//
// `ctx` is opaque to generated code. It is created by the runtime for one
// top-level evaluation and handed, unchanged, to every helper below; the
// runtime (runtime/native_code.cpp) is the only code that looks inside it.
// Because no address other than the helpers' is baked into the code, an
// object file can be cached on disk and reused by another process.
//
// The helpers are implemented in the runtime and registered into the JIT as
// absolute symbols under exactly these names. They never throw, never keep a
// pointer they were given, and are safe to call from any number of threads at
// once (all per-call state lives behind `ctx`).
//
// Strings are (pointer, length) pairs, not NUL-terminated. A string that a
// helper returns points either into an event/symptom/catalog (which do not
// change while an expression runs) or into storage owned by `ctx`; it stays
// valid until the top-level call returns.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// One value of the .attr language. `type` is the numeric value of
// culprit::Type (0 null, 1 bool, 2 int, 3 float, 4 string, 5 time,
// 6 duration); only the payload member(s) of that type are meaningful.
typedef struct CulpritJitValue {
  int32_t type;
  int32_t reserved;  // keeps the layout identical on every 64-bit target
  int64_t i;         // bool (0 or 1), int, time (ns since epoch), duration (ns)
  double f;          // float
  const char* s;     // string bytes
  int64_t n;         // string length in bytes
} CulpritJitValue;

enum { CULPRIT_JIT_OK = 0, CULPRIT_JIT_BAIL = 1 };

// Records read through culprit_jit_record.
enum { CULPRIT_JIT_TERMINAL = 0, CULPRIT_JIT_OUTCOME = 1, CULPRIT_JIT_WORKLOAD = 2 };

// String predicates of culprit_jit_str_test.
enum { CULPRIT_JIT_CONTAINS = 0, CULPRIT_JIT_STARTS_WITH = 1, CULPRIT_JIT_ENDS_WITH = 2 };

typedef int32_t (*CulpritJitFn)(void* ctx, CulpritJitValue* out);

// The custom fields of the event or symptom bound to a slot: the address of
// its first culprit::Value (NULL when the slot holds no item of that sort),
// and its kind id (high 32 bits) and number of fields (low 32 bits). The
// generated code then reads a field as a culprit::Value directly, using the
// layout it was compiled with (jit::ValueLayout). Returned in two registers.
typedef struct CulpritJitFields {
  const void* values;
  int64_t kind_and_count;
} CulpritJitFields;

// ---- reading the world (out->type is the value's dynamic type)
void culprit_jit_event_field(void* ctx, int32_t slot, int32_t selector, CulpritJitValue* out);
void culprit_jit_symptom_field(void* ctx, int32_t slot, int32_t selector, CulpritJitValue* out);
// Read only (generated code may merge repeated calls for one slot).
CulpritJitFields culprit_jit_event_fields(void* ctx, int32_t slot);
CulpritJitFields culprit_jit_symptom_fields(void* ctx, int32_t slot);
void culprit_jit_capture(void* ctx, int32_t index, CulpritJitValue* out);
void culprit_jit_record(void* ctx, int32_t record, int32_t field, CulpritJitValue* out);
int32_t culprit_jit_covered(void* ctx, const char* source, int64_t source_len, const char* node, int64_t node_len);
double culprit_jit_coverage(void* ctx, const char* source, int64_t source_len);
int32_t culprit_jit_is_node(void* ctx, const char* name, int64_t name_len);
// rank_node(): the node's name (a view the World keeps), or null.
void culprit_jit_rank_node(void* ctx, int64_t rank, CulpritJitValue* out);
// host_node(): the node's name (a view the World keeps), or null.
void culprit_jit_host_node(void* ctx, const char* host, int64_t host_len, CulpritJitValue* out);
// gaps(): the ranks left out (allocated in the context), or null.
void culprit_jit_gaps(void* ctx, const char* list, int64_t list_len, CulpritJitValue* out);

// ---- strings
// Three-way byte-wise comparison (std::string order): -1, 0 or 1.
int32_t culprit_jit_str_compare(const char* a, int64_t a_len, const char* b, int64_t b_len);
int32_t culprit_jit_str_test(int32_t which, const char* a, int64_t a_len, const char* b, int64_t b_len);
void culprit_jit_str_concat(void* ctx, const char* a, int64_t a_len, const char* b, int64_t b_len, CulpritJitValue* out);
void culprit_jit_str_case(void* ctx, int32_t upper, const char* a, int64_t a_len, CulpritJitValue* out);
void culprit_jit_str_trim(const char* a, int64_t a_len, CulpritJitValue* out);
// 1 and *out set when the text parses (int(s) base 10, hex(s) base 16), else 0.
int32_t culprit_jit_parse_int(const char* a, int64_t a_len, int32_t base, int64_t* out);
int32_t culprit_jit_parse_float(const char* a, int64_t a_len, double* out);
// time(s): 1 and *out (ns since the epoch) set when the text starts with an ISO 8601 instant, else 0.
int32_t culprit_jit_parse_time(const char* a, int64_t a_len, int64_t* out);
// duration(v, unit): 1 and *out (ns) set, or 0 for null.
int32_t culprit_jit_duration(const CulpritJitValue* v, int64_t unit_ns, int64_t* out);
// str(v) and the text of interpolation parts (null prints "null" here, "?" there).
void culprit_jit_to_text(void* ctx, const CulpritJitValue* v, CulpritJitValue* out);
void culprit_jit_interpolate(void* ctx, const CulpritJitValue* parts, int32_t count, CulpritJitValue* out);
int32_t culprit_jit_matches(void* ctx, int32_t regex, const char* a, int64_t a_len);

// ---- queries and group aggregates. `op` is the numeric culprit::ir::Op of
// the expression; `value` is the compiled value expression of max/min,
// distinct and values (else null). Return CULPRIT_JIT_OK, or CULPRIT_JIT_BAIL
// when `value` bailed, so that the caller bails too. (Query filters are
// top-level expressions: the runtime runs them natively or interprets them.)
int32_t culprit_jit_query(void* ctx, int32_t op, int32_t query, CulpritJitFn value, CulpritJitValue* out);
int32_t culprit_jit_group(void* ctx, int32_t op, CulpritJitFn value, CulpritJitValue* out);

#ifdef __cplusplus
}  // extern "C"
#endif
