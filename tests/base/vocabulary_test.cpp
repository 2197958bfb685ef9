// docs/vocabulary.md must list exactly the words of base/vocabulary.h, in
// order, with the same meanings: the page is what rule authors and operators
// read, the table is what the program checks against.
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/suggest.h"
#include "base/vocabulary.h"

using namespace culprit;

namespace {

struct Row {
  std::string word, ended, meaning;
  bool operator==(const Row&) const = default;
};

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '|') {
      size_t b = cur.find_first_not_of(' '), e = cur.find_last_not_of(' ');
      out.push_back(b == std::string::npos ? "" : cur.substr(b, e - b + 1));
      cur.clear();
    } else {
      cur += line[i];
    }
  }
  return out;
}

// Rows of every table, keyed by the heading above it ("Statuses",
// "Sub-domain roots/hardware").
std::map<std::string, std::vector<Row>> tables_of(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::map<std::string, std::vector<Row>> out;
  std::string h2, key, line;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) key = h2 = line.substr(3);
    else if (line.rfind("### ", 0) == 0) key = h2 + "/" + line.substr(4);
    else if (line.rfind("| `", 0) == 0) {
      auto c = cells(line);
      REQUIRE_MESSAGE(c.size() >= 2, line);
      Row r;
      r.word = c[0].substr(1, c[0].size() - 2);
      if (c.size() == 3) r.ended = c[1];
      r.meaning = c.back();
      out[key].push_back(r);
    }
  }
  return out;
}

std::vector<Row> rows(std::span<const vocab::Word> list) {
  std::vector<Row> out;
  for (const auto& w : list) out.push_back({std::string(w.word), "", std::string(w.meaning)});
  return out;
}

}  // namespace

TEST_CASE("vocabulary: docs/vocabulary.md lists the table's words and meanings") {
  auto t = tables_of(std::string(CULPRIT_SOURCE_DIR) + "/docs/vocabulary.md");
  CHECK(t["Statuses"] == rows(vocab::statuses()));
  CHECK(t["Domains"] == rows(vocab::domains()));
  CHECK(t["Job actions"] == rows(vocab::job_actions()));
  CHECK(t["Node actions"] == rows(vocab::node_actions()));
  for (const auto& d : vocab::domains())
    CHECK_MESSAGE(t["Sub-domain roots/" + std::string(d.word)] == rows(vocab::sub_domain_roots(d.word)), d.word);
  auto states = rows(vocab::terminal_states());
  for (auto& s : states) s.ended = vocab::contains(vocab::ended_states(), s.word) ? "yes" : "no";
  CHECK(t["Terminal states"] == states);
  CHECK(t.size() == 5 + vocab::domains().size());
}

TEST_CASE("vocabulary: lists hold distinct words and ended states are terminal states") {
  for (auto list : {vocab::statuses(), vocab::domains(), vocab::job_actions(), vocab::node_actions(),
                    vocab::terminal_states(), vocab::ended_states()}) {
    auto w = vocab::words(list);
    std::sort(w.begin(), w.end());
    CHECK(std::adjacent_find(w.begin(), w.end()) == w.end());
  }
  auto states = vocab::words(vocab::terminal_states());
  CHECK(std::is_sorted(states.begin(), states.end()));
  for (const auto& s : vocab::ended_states()) CHECK(vocab::contains(vocab::terminal_states(), s.word));
  CHECK(vocab::contains(vocab::ended_states(), vocab::state::kEvicted));
  CHECK_FALSE(vocab::contains(vocab::ended_states(), "RUNNING"));
}

TEST_CASE("vocabulary: destructive node actions and unknown domains") {
  CHECK(vocab::is_destructive(vocab::node_action::kDrain));
  CHECK(vocab::is_destructive(vocab::node_action::kReplaceSuspect));
  CHECK_FALSE(vocab::is_destructive(vocab::node_action::kInspect));
  CHECK_FALSE(vocab::is_destructive(vocab::node_action::kInspectLink));
  CHECK(vocab::sub_domain_roots("firmware").empty());
  CHECK(did_you_mean("hardwre", vocab::words(vocab::domains())) == "did you mean 'hardware'?");
}
