// The verdict's hang detail (hang_location.h). The symptoms' fields are the
// catalog's: rank, pg, seq, op, group (the group's description), ranks
// (several laggards one report named: "3, 6") and, for members without a
// dump, absent_ranks as the Flight Recorder reader renders it ("3 (node-02),
// 5", runtime/flight_recorder.h).
#include "runtime/hang_location.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace culprit {
namespace {

const Value* field(const Symptom& s, std::string_view name) {
  for (size_t i = 0; i < s.field_names.size() && i < s.fields.size(); ++i)
    if (s.field_names[i] == name) return &s.fields[i];
  return nullptr;
}
std::optional<int64_t> int_field(const Symptom& s, std::string_view name) {
  const Value* v = field(s, name);
  if (v && v->type == Type::Int) return v->i;
  return std::nullopt;
}
std::string text_field(const Symptom& s, std::string_view name) {
  const Value* v = field(s, name);
  return v && v->type == Type::String ? v->s : std::string();
}

// What localised it: Flight Recorder dumps, NCCL's RAS, or lines of the
// job's own output (c10d's work status, Horovod's stall check, PyTorch's
// desync report and collective check).
std::string source_of(const Symptom& s) {
  if (s.kind_name.starts_with("hang.ras_")) return "ras";
  return s.source == "flight_recorder" ? "flight_recorder" : "logs";
}

// Group, sequence id and operation from the first symptom that has them.
void take_collective(HangLocation& h, const Symptom& s) {
  if (!h.group) {
    if (auto g = int_field(s, "pg"); g && *g >= 0) h.group = g;
  }
  if (h.group_desc.empty()) h.group_desc = text_field(s, "group");
  if (!h.seq) h.seq = int_field(s, "seq");
  if (h.op.empty()) h.op = text_field(s, "op");
}

// An operation as the summary names it: a list of tensors (Horovod's) by
// its first, and never more than a line's worth.
std::string short_op(const std::string& op) {
  std::string s = op;
  if (size_t comma = s.find(", "); comma != std::string::npos) s = s.substr(0, comma) + " and others";
  if (s.size() > 72) s = s.substr(0, 69) + "...";
  return s;
}

// "nccl:all_reduce #43 of process group 0 (default_pg)", as much as is known.
std::string collective_phrase(const HangLocation& h) {
  const std::string op = short_op(h.op);
  std::string c = !op.empty() && h.seq ? fmt::format("{} #{}", op, *h.seq)
                  : h.seq              ? fmt::format("collective #{}", *h.seq)
                  : !op.empty()        ? op
                                       : std::string("a collective");
  if (h.group) c += fmt::format(" of process group {}", *h.group);
  if (!h.group_desc.empty()) c += h.group ? " (" + h.group_desc + ")" : " of process group " + h.group_desc;
  return c;
}

std::string group_phrase(const HangLocation& h) {
  std::string g = h.group ? fmt::format("process group {}", *h.group) : std::string("a process group");
  if (!h.group_desc.empty()) g += " (" + h.group_desc + ")";
  return g;
}

std::string who(const HangLocation& h) {
  std::vector<std::string> ranks;
  for (int64_t r : h.laggard_ranks) ranks.push_back(std::to_string(r));
  std::string out;
  if (!ranks.empty()) out = fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", fmt::join(ranks, ", "));
  if (!h.laggard_nodes.empty()) out += fmt::format("{}{}", out.empty() ? "a rank on " : " on ", fmt::join(h.laggard_nodes, ", "));
  return out.empty() ? std::string("a rank") : out;
}

void finish(HangLocation& h) {
  std::sort(h.laggard_ranks.begin(), h.laggard_ranks.end());
  h.laggard_ranks.erase(std::unique(h.laggard_ranks.begin(), h.laggard_ranks.end()), h.laggard_ranks.end());
  std::sort(h.laggard_nodes.begin(), h.laggard_nodes.end());
  h.laggard_nodes.erase(std::unique(h.laggard_nodes.begin(), h.laggard_nodes.end()), h.laggard_nodes.end());
  std::sort(h.evidence.begin(), h.evidence.end());
  h.evidence.erase(std::unique(h.evidence.begin(), h.evidence.end()), h.evidence.end());
}

// "3 (node-02), 5 and 2 more" -> ranks {3, 5}, nodes {node-02}.
void parse_absent(const std::string& text, HangLocation& h) {
  size_t i = 0;
  while (i < text.size()) {
    size_t end = text.find(", ", i);
    std::string part = text.substr(i, end == std::string::npos ? std::string::npos : end - i);
    if (size_t more = part.find(" and "); more != std::string::npos) part.resize(more);
    size_t digits = 0;
    while (digits < part.size() && part[digits] >= '0' && part[digits] <= '9') ++digits;
    if (digits > 0 && digits <= 9) h.laggard_ranks.push_back(std::stoll(part.substr(0, digits)));
    if (size_t open = part.find(" ("); open != std::string::npos && part.back() == ')')
      h.laggard_nodes.push_back(part.substr(open + 2, part.size() - open - 3));
    if (end == std::string::npos) break;
    i = end + 2;
  }
}

}  // namespace

std::optional<HangLocation> locate_hang(const std::deque<Symptom>& symptoms) {
  std::vector<const Symptom*> desync, laggard, ras, missing, stalled;
  for (const Symptom& s : symptoms) {
    if (s.state == SymptomState::Scrubbed || !s.kind_name.starts_with("hang.")) continue;
    // Named ranks stay where the hang was when a cause explains it (their
    // symptom is then demoted as that cause's cascade); a group-wide reading
    // (desync, stalled) that a cause outranked says nothing more.
    if (s.kind_name == "hang.laggard") laggard.push_back(&s);
    else if (s.kind_name == "hang.ras_behind" || s.kind_name == "hang.ras_unresponsive") ras.push_back(&s);
    else if (s.kind_name == "hang.missing_dumps") missing.push_back(&s);
    else if (s.state != SymptomState::Active) continue;
    else if (s.kind_name == "hang.desync") desync.push_back(&s);
    else if (s.kind_name == "hang.stalled_collective") stalled.push_back(&s);
  }
  // Flight Recorder's reading first where both speak: it sees every group's
  // sequence ids, c10d's lines only the ranks that printed.
  auto fr_first = [](std::vector<const Symptom*>& v) {
    std::stable_sort(v.begin(), v.end(), [](const Symptom* a, const Symptom* b) {
      return (source_of(*a) == "flight_recorder") > (source_of(*b) == "flight_recorder");
    });
  };
  for (auto* v : {&desync, &laggard, &ras, &missing, &stalled}) fr_first(*v);

  HangLocation h;
  if (!desync.empty()) {
    h.kind = "desync";
    h.source = source_of(*desync.front());
    for (const Symptom* s : desync) h.evidence.push_back(s->id);
    take_collective(h, *desync.front());
    h.op.clear();  // the ranks disagree on it
    h.summary = fmt::format("hang in {}: its ranks entered different collectives{} (a desync: the job's code diverged between them)",
                            group_phrase(h), h.seq ? fmt::format(" at #{}", *h.seq) : "");
  } else if (!laggard.empty() || !ras.empty()) {
    h.kind = "straggler";
    const auto& from = !laggard.empty() ? laggard : ras;
    h.source = source_of(*from.front());
    for (const Symptom* s : from) {
      h.evidence.push_back(s->id);
      if (auto r = int_field(*s, "rank")) h.laggard_ranks.push_back(*r);
      else parse_absent(text_field(*s, "ranks"), h);  // several ranks in one report: "3, 6"
      // RAS names the process's node only when its address stands for one
      // (the rule's `placed`); otherwise the symptom is on the reporting node.
      const Value* p = field(*s, "placed");
      bool placed = !(p && p->type == Type::Bool && !p->b);
      if (placed && !s->node.empty() && !s->control_plane) h.laggard_nodes.push_back(s->node);
      if (source_of(*s) == h.source) take_collective(h, *s);
    }
    finish(h);  // who() below reads the sorted lists
    h.summary = h.source == "ras"
                    ? fmt::format("hang: NCCL's RAS names {} as the process the others wait for", who(h))
                    : fmt::format("hang in {}: {} never started it", collective_phrase(h), who(h));
  } else if (!missing.empty()) {
    h.kind = "straggler";
    h.source = "flight_recorder";
    for (const Symptom* s : missing) {
      h.evidence.push_back(s->id);
      parse_absent(text_field(*s, "absent_ranks"), h);
      take_collective(h, *s);
    }
    finish(h);
    h.summary = fmt::format("hang in {}: {} left no Flight Recorder dump while the members that dumped wait in it", collective_phrase(h),
                            who(h));
  } else if (!stalled.empty()) {
    h.kind = "stalled_collective";
    h.source = source_of(*stalled.front());
    for (const Symptom* s : stalled) h.evidence.push_back(s->id);
    take_collective(h, *stalled.front());
    h.summary = h.source == "flight_recorder"
                    ? fmt::format("hang in {}: every rank started it and none finished (the network or NCCL under it)", collective_phrase(h))
                    : fmt::format("hang in {}: every rank heard from timed out in it (a rank not heard from never started it, or "
                                  "the network or NCCL under it stalled)",
                                  collective_phrase(h));
  } else {
    return std::nullopt;
  }
  finish(h);
  return h;
}

}  // namespace culprit
