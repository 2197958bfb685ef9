#include "base/suggest.h"

#include <doctest/doctest.h>

using culprit::closest_match;
using culprit::did_you_mean;
using culprit::edit_distance;

TEST_CASE("edit distance counts insertions, deletions, substitutions and adjacent swaps") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("pci", "pci") == 0);
  CHECK(edit_distance("pcie", "pci") == 1);
  CHECK(edit_distance("symptom", "symptoms") == 1);
  CHECK(edit_distance("hardwre", "hardware") == 1);
  CHECK(edit_distance("ofa", "ofa") == 0);
  CHECK(edit_distance("recieve", "receive") == 1);  // one transposition
  CHECK(edit_distance("COMPLETD", "completed") == 1);  // case does not count
  CHECK(edit_distance("abc", "") == 3);
}

TEST_CASE("the suggestions the issue names") {
  CHECK(did_you_mean("pcie", {"pci", "xid", "node"}) == "did you mean 'pci'?");
  CHECK(did_you_mean("lowercase", {"int", "lower", "upper", "len"}) == "did you mean 'lower'?");
  CHECK(did_you_mean("gpu.need_reset", {"gpu.xid", "gpu.needs_reset"}) == "did you mean 'gpu.needs_reset'?");
  CHECK(did_you_mean("COMPLETD", {"COMPLETED", "CANCELLED", "FAILED"}) == "did you mean 'COMPLETED'?");
  CHECK(did_you_mean("diagnoze", {"diagnose", "test", "check"}) == "did you mean 'diagnose'?");
}

TEST_CASE("nothing is suggested when nothing is close") {
  CHECK(did_you_mean("frobnicate", {"diagnose", "test", "check"}).empty());
  CHECK_FALSE(closest_match("x", {"y", "z"}));          // one letter is no misspelling of another
  CHECK_FALSE(closest_match("id", {"os"}));
  CHECK_FALSE(closest_match("pci", {"pci"}));           // the word itself is not a suggestion
  CHECK_FALSE(closest_match("", {"a"}));
  CHECK_FALSE(closest_match("int", {"interpolation"}));  // a prefix much shorter than the candidate
}

TEST_CASE("the closest wins, ties go to the first listed") {
  CHECK(*closest_match("stat", {"state", "start"}) == "state");
  CHECK(*closest_match("stat", {"start", "state"}) == "start");
  CHECK(*closest_match("nodez", {"nodes", "node"}) == "nodes");
}
