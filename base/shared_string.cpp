#include "base/shared_string.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <ostream>

namespace culprit {

SharedString::Rep* SharedString::make(std::string_view s) {
  if (s.empty()) return nullptr;  // the empty string needs no buffer
  void* p = std::malloc(sizeof(Rep) + s.size() + 1);
  if (!p) throw std::bad_alloc();
  Rep* r = new (p) Rep{{1}, s.size()};
  char* out = reinterpret_cast<char*>(r + 1);
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return r;
}

void SharedString::destroy(Rep* r) noexcept {
  r->~Rep();
  std::free(r);
}

std::ostream& operator<<(std::ostream& os, const SharedString& s) { return os << s.view(); }

}  // namespace culprit
