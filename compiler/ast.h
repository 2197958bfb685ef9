// The syntax tree of one .attr file, as written, with source ranges.
//
// The parser (compiler/parser.h) builds it; semantic analysis
// (compiler/sema.h) checks it and lowers it to the typed IR. Nothing here
// knows about ANTLR: the parse step translates ANTLR's tree into these plain
// structs and no ANTLR type leaves it. Names are kept as written; nothing is
// resolved yet. Owned by value/unique_ptr; not shared between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/vocabulary.h"
#include "compiler/diagnostics.h"
#include "compiler/value.h"

namespace culprit::ast {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class NodeRelation { Any, Same, Other };
enum class WithinDirection { Before, After, Around };

struct Query {
  SourceRange where;
  bool symptom = false;                // `symptom ...` else `event ...`
  std::string kind_pattern;            // "gpu.xid", "nccl.*", "*"
  SourceRange kind_range;
  NodeRelation relation = NodeRelation::Any;
  ExprPtr filter;                      // `where ...`, may be null
  bool has_within = false;
  int64_t within_ns = 0;
  WithinDirection direction = WithinDirection::Around;
  std::string anchor;                  // binding named after before/after/around
  SourceRange anchor_range;
};

enum class ExprKind {
  IntLit, FloatLit, DurationLit, StringLit, BoolLit, NullLit,
  Name,            // text = the name
  Field,           // args[0] . text
  Unary,           // op = "-" | "not"; args[0]
  Binary,          // op; args[0], args[1]
  Matches,         // args[0] matches /text/ (regex_flags)
  IsNull,          // args[0] is [not] null
  In,              // args[0] [not] in [args[1..]]
  Call,            // text(args...)
  QueryAggregate,  // text in exists|none|count|nodes|max|min; binding: query [, args[0]]
  Order,           // args[0] [not] before|after args[1]; op = "before" | "after"
};

struct Expr {
  ExprKind kind = ExprKind::NullLit;
  SourceRange where;
  int64_t int_value = 0;     // IntLit (also hex), DurationLit (ns)
  double float_value = 0;    // FloatLit
  bool bool_value = false;   // BoolLit
  std::string text;          // StringLit (unescaped), Name, Field, Call, QueryAggregate, Matches regex
  std::string op;            // Unary/Binary operator spelling
  std::string regex_flags;   // Matches
  SourceRange regex_range;   // Matches: the /regex/ token
  bool negated = false;      // IsNull (is not null), In (not in), Order (not before/after)
  std::vector<ExprPtr> args;
  std::string binding;       // QueryAggregate
  SourceRange binding_range;
  std::unique_ptr<Query> query;  // QueryAggregate
};

struct FieldInit {
  std::string name;
  SourceRange where;
  ExprPtr value;
};

enum class ActionKind { Emit, Symptom, Demote, Scrub, SetPriority, Classify, SetOutcome };

struct Action {
  ActionKind kind = ActionKind::Emit;
  SourceRange where;
  // emit / symptom
  std::string kind_name;
  SourceRange kind_range;
  bool on_job = false;  // emit/symptom `on job`; classify `... on job` (names no node)
  ExprPtr node;       // `on EXPR`
  ExprPtr key;        // symptom `key EXPR`
  ExprPtr priority;   // symptom `priority EXPR`
  ExprPtr at;         // symptom `at EXPR`
  std::vector<FieldInit> fields;
  // demote / scrub / set priority / classify
  std::string binding;
  SourceRange binding_range;
  std::unique_ptr<Query> query;  // `demote y: QUERY`; null for `demote x`
  std::string reason;            // raw string (interpolation parsed by sema)
  SourceRange reason_range;
  ExprPtr value;                 // set priority
  // classify / set outcome
  std::string status;            // set outcome
  std::string domain;
  SourceRange domain_range;
  SourceRange sub_domain_range;       // the quoted sub_domain, when given
  std::string sub_domain;
  bool generic = false;               // classify ... generic
};

struct Rule {
  std::string name;
  SourceRange where;        // the name
  std::string stage;
  SourceRange stage_range;
  std::string for_binding;  // empty if no `for`
  SourceRange for_binding_range;
  std::unique_ptr<Query> for_query;
  std::vector<ExprPtr> wheres;
  std::vector<ExprPtr> group_keys;
  bool has_group = false;
  int64_t group_within_ns = 0;  // 0 = no gap splitting
  SourceRange group_range;
  std::vector<Action> actions;
};

struct LineTest {
  std::string title;
  SourceRange where;
  std::string line;
  bool expect_none = false;
  std::string expect_kind;
  SourceRange expect_range;
  std::vector<FieldInit> fields;
};

// One `match /REGEX/FLAGS` of an extractor.
struct MatchClause {
  std::string regex;        // between the slashes, `\/` already turned into `/`
  std::string flags;
  SourceRange range;        // the /regex/ token
};

struct Extractor {
  std::string name;
  SourceRange where;
  std::vector<std::pair<std::string, SourceRange>> sources;
  std::optional<int64_t> keep_before_ns, keep_after_ns;  // `keep D before, D after`
  std::optional<int64_t> keep_last;                      // `keep last N`
  SourceRange keep_range;
  std::vector<MatchClause> matches;  // in source order: the first that matches a line wins
  bool has_emit = false;
  std::string emit_kind;
  SourceRange emit_range;
  std::vector<FieldInit> emit_fields;
  std::vector<LineTest> tests;
};

struct ScenarioLog {
  std::string host, source, text;
  SourceRange where;
};

// A metric sample (docs/bundle.md, observations): host, source, time,
// metric name, labels, value.
struct ScenarioMetric {
  std::string host, source, ts, name;
  std::vector<std::pair<std::string, std::string>> labels;  // as written
  double value = 0;
  SourceRange where;
};

enum class ScenarioExpectKind { Status, Domain, SubDomain, Culprits, SymptomState, NoSymptom };

struct ScenarioExpect {
  ScenarioExpectKind kind = ScenarioExpectKind::Status;
  SourceRange where;
  std::string value;                 // status / domain / sub_domain / state
  std::vector<std::string> culprits;
  std::string kind_pattern;
  std::string node;                  // optional
};

struct Scenario {
  std::string title;
  SourceRange where;
  std::vector<std::string> nodes;
  std::string workload_id = "scenario";
  std::string scheduler = "static";   // `workload "ID" on slurm|kubernetes|static`
  SourceRange scheduler_range;
  std::string terminal_state = vocab::state::kFailed;
  SourceRange terminal_range;      // the state's name in `terminal NAME`
  int64_t terminal_exit = 1;
  bool has_window = false;
  std::string window_start, window_end;
  SourceRange window_range;
  std::vector<ScenarioLog> logs;
  std::vector<ScenarioMetric> metrics;
  std::vector<ScenarioExpect> expects;
  // `ranks "node-02" "8-15"`: the global ranks the context places on a node.
  struct Ranks {
    std::string node, ranks;
    SourceRange where;
  };
  std::vector<Ranks> ranks;
};

// A `table`: a message catalog as data (docs/language.md §5a). Cells are
// literals as written: an int, a string or null (Value::null()); sema
// checks that each column holds one type and each row one cell per column.
struct TableCell {
  Value value;
  SourceRange where;
};

struct Table {
  std::string name;
  SourceRange where;                                       // the name
  std::vector<std::pair<std::string, SourceRange>> columns;
  std::vector<std::vector<TableCell>> rows;                // as written
  std::vector<SourceRange> row_ranges;                     // each `row ...`
};

struct CatalogHeader {
  std::string name, version;
  SourceRange where;
};

struct File {
  std::shared_ptr<const SourceFile> source;
  std::optional<CatalogHeader> catalog;
  std::vector<Extractor> extractors;
  std::vector<Rule> rules;
  std::vector<Scenario> scenarios;
  std::vector<Table> tables;
};

}  // namespace culprit::ast
