// The typed intermediate representation of a compiled catalog.
//
// Semantic analysis (compiler/sema.h) produces a Catalog; every name in it is
// resolved to an index, every expression carries its static type, and every
// extractor regex has been accepted by both Hyperscan and RE2 (a `matches`
// regex, which only RE2 runs, by RE2). Executors (the
// interpreter in runtime/interpreter.h, and native code generators) consume
// this IR and nothing else, so the IR is the contract between them: an
// executor must give the same result for every Expr as the interpreter.
//
// A Catalog is immutable once built and may be shared by any number of
// threads (use std::shared_ptr<const Catalog>).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ast.h"
#include "compiler/diagnostics.h"
#include "compiler/value.h"

namespace culprit::ir {

enum class Stage : uint8_t { Extract, Early, Symptoms, Scrub, Aggregate, Final, Outcome, PostOutcome };
inline constexpr std::array<const char*, 8> kStageNames = {
    "extract", "early", "symptoms", "scrub", "aggregate", "final", "outcome", "post_outcome"};

// Built-in fields every event has. Field references use these negative
// selectors; custom fields use their FieldName index (>= 0).
enum EventBuiltin : int32_t {
  kEvKind = -1, kEvNode = -2, kEvHost = -3, kEvSource = -4, kEvFile = -5,
  kEvLine = -6, kEvOffset = -7, kEvTs = -8, kEvText = -9,
  // Not nameable in rules: sema uses them to lower the temporal order
  // construct (`y not before x - 5m`, docs/language.md §6.1).
  kEvOwnTs = -10,   // time: ts when the line carried it (not inherited from a neighbour), else null
  kEvPlace = -11,   // string: "host/source/file", the file the line was read from
  kEvBoot = -12,    // duration: unanchored dmesg seconds since boot (Evidence::boot), else null
};
// Built-in fields every symptom has.
enum SymptomBuiltin : int32_t {
  kSyId = -1, kSyKind = -2, kSyNode = -3, kSyKey = -4, kSyFirst = -5, kSyLast = -6,
  kSyCount = -7, kSyPriority = -8, kSySummary = -9,
  kSyFile = -14, kSyLine = -15,  // its earliest evidence item's file path and line (null without evidence)
  kSySource = -16,               // and its source ("kernel", "app", ...)
  // Not nameable in rules (see kEvOwnTs).
  kSyOwnFirst = -10,   // time: the earliest own time of its evidence (Symptom::own_first), else null
  kSyPlace = -11,      // string: "host/source/file" of its first evidence item, null without evidence
  kSyPlaceLine = -12,  // int: the line of that evidence item, null without evidence
  kSyPlaceBoot = -13,  // duration: that evidence item's unanchored boot time, else null
};

enum class Op : uint8_t {
  Const,          // constant
  Capture,        // a = capture index (only in an extractor's emit)
  EventField,     // a = binding slot, b = field selector
  SymptomField,   // a = binding slot, b = field selector
  Terminal,       // a: 0 state, 1 exit_code
  Outcome,        // a: 0 status, 1 domain, 2 sub_domain, 3 culprits (count)
  Workload,       // a: 0 nodes (count), 1 id, 2 start, 3 end, 4 scheduler, 5 node_names
  Neg, Not,
  Add, Sub, Mul, Mod, Shl, Shr, BitAnd, BitXor, BitOr,
  Eq, Ne, Lt, Le, Gt, Ge,
  And, Or,
  Matches,        // kids[0]; a = regex index in Catalog::regexes
  IsNull, IsNotNull,
  In, NotIn,      // kids[0] in kids[1..]
  Call,           // a = Builtin; kids = arguments
  QueryExists, QueryNone, QueryCount, QueryNodes,  // a = query index
  QueryMax, QueryMin,                              // a = query index; kids[0] = value over the query binding
  GroupCount, GroupDistinct, GroupValues, GroupFirstTs, GroupLastTs,  // kids[0] for distinct/values
  Interpolate,    // kids = parts; each converted with value_to_text (null as "?") and concatenated
};

enum class Builtin : uint8_t {
  Int, Hex, Float, Duration, Seconds, Lower, Upper, Trim, Len, Contains, StartsWith, EndsWith,
  Str, Coalesce, Covered, Coverage, If,
  Time,           // time(s): the ISO 8601 instant written in s (zone optional, UTC without), else null
  IsNode,         // is_node(s): s names a node of the workload (World::is_node)
  RankNode,       // rank_node(r): the node the context's ranks layout puts global rank r on, else null (World::rank_node)
  Gaps,           // gaps(s): the ranks a comma-separated list leaves out below its largest (base/text_util.h rank_gaps)
  HostNode,       // host_node(s): the workload node a host name, FQDN, short name or alias stands for, else null (World::host_node)
};

struct Expr {
  Op op = Op::Const;
  Type type = Type::Null;
  int32_t a = 0;
  int32_t b = 0;
  Value constant;
  std::vector<Expr> kids;
  SourceRange where;
};

enum class NodeRelation : uint8_t { Any, Same, Other };
enum class WithinDirection : uint8_t { Before, After, Around };

// A query over the event store or the active symptoms.
struct Query {
  bool symptom = false;
  std::vector<int32_t> kinds;   // kind ids (event or symptom kinds), sorted
  NodeRelation relation = NodeRelation::Any;
  int32_t bind_slot = 0;        // slot the candidate is bound to while `filter` runs
  int32_t relation_slot = 0;    // slot whose node `relation` compares against (the rule's `for` binding)
  std::optional<Expr> filter;
  bool has_within = false;
  int64_t within_ns = 0;
  WithinDirection direction = WithinDirection::Around;
  int32_t anchor_slot = 0;
  bool anchor_is_symptom = false;
};

struct FieldDef {
  std::string name;
  int32_t name_id = 0;          // index into Catalog::field_names
  Type type = Type::Null;
};

// The schema of one event or symptom kind: the union of the fields that
// every emitter/creator gives it (a field absent from one creator is null there).
struct KindSchema {
  std::string name;
  std::vector<FieldDef> fields;          // slot order
  std::vector<int32_t> slot_of_name;     // by field name id; -1 if absent
  int32_t slot(int32_t name_id) const {
    return name_id >= 0 && name_id < static_cast<int32_t>(slot_of_name.size()) ? slot_of_name[name_id] : -1;
  }
};

struct FieldAssign {
  int32_t slot = 0;  // slot in the target kind's schema
  Expr value;
};

struct LineTest {
  std::string title;
  SourceRange where;
  std::string line;
  bool expect_none = false;
  std::vector<std::pair<int32_t, Value>> expected;  // slot -> value
};

struct Extractor {
  std::string name;
  SourceRange where;
  std::vector<std::string> sources;        // sorted, unique
  // `keep D before, D after`: its events are kept this far outside the
  // workload window (at least the default slack), e.g. node state a health
  // check reported after the job or a daemon that failed before it.
  std::optional<int64_t> keep_before_ns, keep_after_ns;
  // `keep last N`: per file, only the last N events of this extractor that
  // are in scope are kept (runtime/scanner.h); null keeps them all.
  std::optional<int64_t> keep_last;
  std::string pattern;                     // as written
  std::string re2_pattern;                 // named groups spelled (?P<name>...)
  bool caseless = false, dotall = false;
  std::vector<std::string> capture_names;  // by capture index (RE2 group number - 1)
  int32_t kind = 0;                        // event kind id
  std::vector<FieldAssign> fields;
  std::vector<LineTest> tests;
};

enum class ActionKind : uint8_t { Emit, Symptom, Demote, Scrub, SetPriority, Classify, SetOutcome };

struct Action {
  ActionKind kind = ActionKind::Emit;
  SourceRange where;
  int32_t kind_id = 0;                 // Emit: event kind; Symptom: symptom kind
  bool on_job = false;
  std::optional<Expr> node;            // explicit target node
  std::optional<Expr> key;
  std::optional<Expr> priority;
  std::optional<Expr> summary;         // Symptom: the `summary` field
  std::optional<Expr> at;              // Symptom: `at EXPR`, the time of this evidence (time or null)
  std::vector<FieldAssign> fields;
  int32_t target_slot = -1;            // Demote/Scrub/SetPriority/Classify of a binding
  std::optional<Query> query;          // Demote/Scrub over a query (binds query->bind_slot)
  std::optional<Expr> reason;          // string (Interpolate)
  std::optional<Expr> value;           // SetPriority
  std::string status, domain, sub_domain;  // Classify / SetOutcome
  // Classify: the symptom shows that something failed, not what (a
  // traceback, a crash signal, a generic CUDA error): it names a node only
  // as the single origin of its class (runtime/outcome.h).
  bool generic = false;
  // (on_job above, for Classify: `classify ... on job`, the class is the
  // job's own, a code or configuration failure wherever it showed: it names
  // no culprit node, whatever node the symptom is on.)
};

struct Rule {
  std::string name;
  Stage stage = Stage::Early;
  SourceRange where;
  int32_t index = 0;                   // catalog order
  std::optional<Query> for_query;      // binds slot 0
  std::vector<Expr> wheres;
  bool grouped = false;
  std::vector<Expr> group_keys;
  int64_t group_within_ns = 0;
  std::vector<Action> actions;
  std::vector<Query> queries;          // queries used inside expressions (Op::Query*.a)
  int32_t slot_count = 1;
  std::vector<bool> slot_is_symptom;   // by slot
};

struct ScenarioLog {
  std::string host, source, text;
};

struct ScenarioMetric {
  std::string host, source, name;
  std::string labels;                  // "k=v,k=v" sorted by key, as observations carry them
  double value = 0;
  int64_t ts = 0;
};

struct ScenarioExpect {
  ast::ScenarioExpectKind kind;
  SourceRange where;
  std::string value;
  std::vector<std::string> culprits;
  std::string kind_pattern;
  std::string node;
};

struct Scenario {
  std::string title;
  SourceRange where;
  std::vector<std::string> nodes;
  std::string workload_id;
  std::string scheduler = "static";
  std::string terminal_state;
  int64_t terminal_exit = 1;
  std::optional<int64_t> window_start, window_end;
  std::vector<ScenarioLog> logs;
  std::vector<ScenarioMetric> metrics;
  std::vector<ScenarioExpect> expects;
  std::vector<std::pair<std::string, std::string>> ranks;  // node -> "0-7,16" (the context's ranks layout)
};

struct RegexDef {
  std::string pattern;       // RE2 syntax
  bool caseless = false, dotall = false;
};

// One part of a catalog: a rule directory (or file) given at load time.
// Verdicts list every part that contributed, so a verdict made with site
// rules says so ("culprit-stdlib 0.1.0 + site 0.0.1").
struct CatalogPartInfo {
  std::string name;                           // its `catalog` header, else the directory's (or file's) name
  std::string version;                        // its header's version, "" without a header
  std::string root;                           // the path as given (a directory, or a file's directory)
  std::string digest;                         // "sha256:..." over this part's files, as for the catalog
  std::vector<std::string> files;             // relative to root, in load order
};

struct Catalog {
  std::string name = "unnamed";
  std::string version = "0.0.0";
  std::string digest;                         // sha256 hex of the catalog's files
  std::vector<std::string> files;             // in load order
  std::vector<CatalogPartInfo> parts;         // in load order; the first names the catalog
  std::vector<std::shared_ptr<const SourceFile>> sources;  // keeps SourceRange pointers valid

  std::vector<std::string> field_names;       // field name ids
  std::vector<KindSchema> event_kinds;        // event kind ids
  std::vector<KindSchema> symptom_kinds;      // symptom kind ids
  int32_t metric_kind = -1;                   // built-in `metric.sample` event kind

  std::vector<Extractor> extractors;
  std::vector<Rule> rules;                    // sorted by (stage, index)
  std::vector<RegexDef> regexes;              // for Op::Matches
  std::vector<Scenario> scenarios;

  int32_t event_kind_id(std::string_view name) const;
  int32_t symptom_kind_id(std::string_view name) const;
  int32_t field_id(std::string_view name) const;
};

}  // namespace culprit::ir
