#include "runtime/json_input.h"

#include <fmt/format.h>

#include <vector>

#include "base/limits.h"
#include "base/text_util.h"

namespace culprit {

namespace {

// nlohmann's parse errors in plain words: "[json.exception.parse_error.101]
// parse error at line 1, column 46: syntax error while parsing value -
// unexpected '{'; expected end of input" becomes "at line 1, column 46:
// unexpected '{'; expected end of input". The class tag and "syntax error
// while parsing ..." say nothing a user can act on.
std::string plain_parse_error(std::string_view what) {
  if (size_t tag = what.find("] "); what.rfind("[json.exception.", 0) == 0 && tag != std::string_view::npos)
    what.remove_prefix(tag + 2);
  if (what.rfind("parse error ", 0) == 0) what.remove_prefix(12);
  std::string out(what);
  if (size_t colon = out.find(": syntax error while parsing "); colon != std::string::npos) {
    size_t dash = out.find(" - ", colon);
    if (dash != std::string::npos) out = out.substr(0, colon) + ": " + out.substr(dash + 3);
  }
  return out;
}

std::string pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

// Builds the tree from nlohmann's SAX events (the same tree its DOM parser
// builds), refusing depth beyond the limit and repeated keys. A template for
// the two tree types: json, and ordered_json where key order is kept.
template <typename json>
class Builder {
 public:
  Builder(json& root, size_t max_depth, JsonInputError& error) : root_(root), max_depth_(max_depth), error_(error) {}

  bool null() { return place(json(nullptr)) != nullptr; }
  bool boolean(bool v) { return place(json(v)) != nullptr; }
  bool number_integer(typename json::number_integer_t v) { return place(json(v)) != nullptr; }
  bool number_unsigned(typename json::number_unsigned_t v) { return place(json(v)) != nullptr; }
  bool number_float(typename json::number_float_t v, const std::string&) { return place(json(v)) != nullptr; }
  bool string(std::string& v) { return place(json(std::move(v))) != nullptr; }
  bool binary(typename json::binary_t& v) { return place(json::binary(std::move(v))) != nullptr; }

  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(std::string& k) {
    Frame& f = stack_.back();
    if (f.value->contains(k)) {
      error_.kind = JsonInputError::Kind::DuplicateKey;
      error_.pointer = path(false) + "/" + pointer_token(k);
      error_.message = fmt::format("duplicate key '{}' at {} (a key may appear once in an object)",
                                   truncate_utf8(sanitize_utf8(k), 64), cut(error_.pointer));
      error_.pointer = cut(error_.pointer);
      return false;
    }
    f.key = std::move(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    error_.kind = JsonInputError::Kind::Syntax;
    error_.byte = position;
    std::string why = plain_parse_error(ex.what());
    error_.message = fmt::format("not valid JSON{}{}", why.rfind("at ", 0) == 0 ? " " : ": ", why);
    return false;
  }

 private:
  struct Frame {
    json* value;      // the open array or object
    std::string key;  // objects: the key of the member being read
  };

  static std::string cut(std::string p) { return p.size() > 200 ? truncate_utf8(p, 200) : p; }

  // The pointer of the value being read (`upcoming`: in the innermost
  // container, the member about to be added rather than the last one).
  std::string path(bool upcoming) const {
    std::string p;
    for (size_t i = 0; i < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      bool last = i + 1 == stack_.size();
      if (last && !upcoming) break;
      if (f.value->is_object()) {
        p += "/" + pointer_token(f.key);
      } else {
        size_t n = f.value->size();
        p += fmt::format("/{}", last ? n : n - 1);
      }
      if (p.size() > 256) break;  // enough to say where; the rest is depth
    }
    return p;
  }

  json* place(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& f = stack_.back();
    if (f.value->is_array()) {
      f.value->push_back(std::move(v));
      return &f.value->back();
    }
    json& slot = (*f.value)[f.key];
    slot = std::move(v);
    return &slot;
  }

  bool open(json&& container) {
    if (stack_.size() >= max_depth_) {
      error_.kind = JsonInputError::Kind::TooDeep;
      error_.pointer = cut(path(true));
      error_.message = limits::exceeded("json_depth", max_depth_, "arrays and objects nested deeper", error_.pointer.empty() ? "/" : error_.pointer);
      return false;
    }
    json* v = place(std::move(container));
    stack_.push_back({v, {}});
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  json& root_;
  size_t max_depth_;
  JsonInputError& error_;
  std::vector<Frame> stack_;
};

template <typename json>
bool parse_into(std::string_view text, json& out, JsonInputError& error, size_t max_depth) {
  error = JsonInputError{};
  json root;
  Builder<json> b(root, max_depth ? max_depth : limits::kJsonDepth, error);
  bool ok = false;
  try {
    ok = json::sax_parse(text.begin(), text.end(), &b, json::input_format_t::json, true);
  } catch (const std::exception& e) {  // allocation failures and the like: still an answer, not a crash
    error.kind = JsonInputError::Kind::Syntax;
    error.message = fmt::format("not valid JSON: {}", e.what());
    ok = false;
  }
  if (!ok) {
    if (error.kind == JsonInputError::Kind::None) {
      error.kind = JsonInputError::Kind::Syntax;
      error.message = "not valid JSON";
    }
    // One line (an NDJSON line, a query answer): its line number says nothing.
    const std::string first_line = "at line 1, column ";
    if (size_t at = error.message.find(first_line); at != std::string::npos && text.find('\n') == std::string_view::npos)
      error.message.replace(at, first_line.size(), "at column ");
    return false;
  }
  out = std::move(root);
  return true;
}

template <typename json>
bool parse_remote(std::string_view text, json& out, std::string& error) {
  JsonInputError e;
  if (!parse_into(text, out, e, 0)) {
    error = e.message;
    return false;
  }
  if (!out.is_object()) {
    error = fmt::format("the answer is a JSON {}, not an object", out.type_name());
    return false;
  }
  return true;
}

}  // namespace

bool parse_json_input(std::string_view text, nlohmann::json& out, JsonInputError& error, size_t max_depth) {
  return parse_into(text, out, error, max_depth);
}

bool parse_json_input(std::string_view text, nlohmann::ordered_json& out, JsonInputError& error, size_t max_depth) {
  return parse_into(text, out, error, max_depth);
}

bool parse_remote_json(std::string_view text, nlohmann::json& out, std::string& error) {
  return parse_remote(text, out, error);
}

bool parse_remote_json(std::string_view text, nlohmann::ordered_json& out, std::string& error) {
  return parse_remote(text, out, error);
}

template <typename json>
std::string string_member(const json& j, std::string_view key, std::string_view fallback) {
  if (!j.is_object()) return std::string(fallback);
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::string(fallback);
  return it->template get<std::string>();
}

std::string string_member_or(const nlohmann::json& j, std::string_view key, std::string_view fallback) {
  return string_member(j, key, fallback);
}

std::string string_member_or(const nlohmann::ordered_json& j, std::string_view key, std::string_view fallback) {
  return string_member(j, key, fallback);
}

std::string describe_json_value(const nlohmann::json& v) {
  using json = nlohmann::json;
  switch (v.type()) {
    case json::value_t::string: return fmt::format("\"{}\"", truncate_utf8(sanitize_utf8(v.get_ref<const std::string&>()), 64));
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::binary: return "binary data";
    case json::value_t::discarded: return "nothing";
    default: return v.dump();  // a number, true, false or null: short by nature
  }
}

}  // namespace culprit
