#include "base/terminal_state.h"

#include "base/vocabulary.h"

namespace culprit {

const std::vector<std::string>& known_terminal_states() {
  static const std::vector<std::string> states = vocab::words(vocab::terminal_states());
  return states;
}

bool is_known_terminal_state(std::string_view state) { return vocab::contains(vocab::terminal_states(), state); }

}  // namespace culprit
