// One function of a library the blueprint opens at first use (dlopen):
// curl_library.cpp and pq_library.cpp resolve each function they call with
// resolve_function(), typed by the header's declaration of it.
//
// Thread-safety: dlsym and dlerror are thread-safe in glibc (dlerror's
// message is per thread). Nothing here throws.
#pragma once

#include <dlfcn.h>
#include <fmt/format.h>

#include <string>

namespace culprit::blueprint {

// Looks up `name` in the library `handle` (opened from `soname`) into `fn`.
// False with `error` ("libx.so.1 has no function f: ...") when it is missing.
template <typename Fn>
bool resolve_function(void* handle, const char* soname, const char* name, Fn& fn, std::string& error) {
  dlerror();  // clear a message left by an earlier call
  void* p = dlsym(handle, name);
  if (!p) {
    const char* why = dlerror();
    error = fmt::format("{} has no function {}: {}", soname, name, why ? why : "its address is null");
    return false;
  }
  fn = reinterpret_cast<Fn>(p);
  return true;
}

}  // namespace culprit::blueprint
