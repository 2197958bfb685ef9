// SharedString: an immutable string whose copies share one buffer.
//
// Evidence carries where a line came from (host, source, file) and the line
// itself. A bundle with a million events has a million of those, mostly
// naming the same few files, and every derived event and symptom copies the
// evidence it was built from. As std::string each copy is a heap block of its
// own (a path is longer than the small-string buffer); as SharedString a copy
// is a pointer and a reference count, and the scanner makes one per file.
//
// Contract: the bytes never change after construction (assignment rebinds
// the handle, it does not write through it). An empty string holds no
// buffer. A SharedString reads as a std::string_view (view(), or the implicit
// conversion); str() makes an independent std::string. Comparisons are by
// bytes, as std::string's.
//
// Ownership: the buffer lives as long as its last handle; handles may outlive
// whatever they were made from.
//
// Thread-safety: the reference count is atomic, so handles to one buffer may
// be copied and destroyed on any threads at once; a single handle is, like
// any object, not to be written by one thread while another reads it.
//
// Errors: nothing throws but allocation (std::bad_alloc, as std::string).
#pragma once

#include <fmt/core.h>

#include <atomic>
#include <compare>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace culprit {

class SharedString {
 public:
  SharedString() noexcept = default;
  SharedString(std::string_view s) : rep_(make(s)) {}  // NOLINT: implicit, as std::string's from text
  SharedString(const std::string& s) : rep_(make(s)) {}  // NOLINT
  SharedString(const char* s) : rep_(make(s)) {}  // NOLINT
  SharedString(const SharedString& o) noexcept : rep_(o.rep_) { retain(); }
  SharedString(SharedString&& o) noexcept : rep_(o.rep_) { o.rep_ = nullptr; }
  ~SharedString() { release(); }
  SharedString& operator=(const SharedString& o) noexcept {
    if (o.rep_ != rep_) {
      o.retain();
      release();
      rep_ = o.rep_;
    }
    return *this;
  }
  SharedString& operator=(SharedString&& o) noexcept {
    if (this != &o) {
      release();
      rep_ = o.rep_;
      o.rep_ = nullptr;
    }
    return *this;
  }
  SharedString& operator=(std::string_view s) { return *this = SharedString(s); }
  SharedString& operator=(const std::string& s) { return *this = SharedString(s); }
  SharedString& operator=(const char* s) { return *this = SharedString(s); }

  std::string_view view() const noexcept { return rep_ ? std::string_view(chars(rep_), rep_->size) : std::string_view(); }
  operator std::string_view() const noexcept { return view(); }  // NOLINT: reads as text
  std::string str() const { return std::string(view()); }
  const char* data() const noexcept { return rep_ ? chars(rep_) : ""; }  // NUL-terminated
  const char* c_str() const noexcept { return data(); }
  size_t size() const noexcept { return rep_ ? rep_->size : 0; }
  bool empty() const noexcept { return rep_ == nullptr; }
  void clear() noexcept {
    release();
    rep_ = nullptr;
  }
  // Whether two handles share one buffer (then they are equal without a compare).
  bool same_buffer(const SharedString& o) const noexcept { return rep_ == o.rep_; }

  friend bool operator==(const SharedString& a, const SharedString& b) noexcept {
    return a.rep_ == b.rep_ || a.view() == b.view();
  }
  friend bool operator==(const SharedString& a, std::string_view b) noexcept { return a.view() == b; }
  friend bool operator==(const SharedString& a, const std::string& b) noexcept { return a.view() == b; }
  friend bool operator==(const SharedString& a, const char* b) noexcept { return a.view() == b; }
  friend std::strong_ordering operator<=>(const SharedString& a, const SharedString& b) noexcept {
    return a.rep_ == b.rep_ ? std::strong_ordering::equal : a.view() <=> b.view();
  }
  friend std::strong_ordering operator<=>(const SharedString& a, std::string_view b) noexcept { return a.view() <=> b; }
  friend std::strong_ordering operator<=>(const SharedString& a, const std::string& b) noexcept {
    return a.view() <=> std::string_view(b);
  }
  friend std::strong_ordering operator<=>(const SharedString& a, const char* b) noexcept {
    return a.view() <=> std::string_view(b);
  }
  friend std::string operator+(const std::string& a, const SharedString& b) { return a + std::string(b.view()); }
  friend std::string operator+(std::string&& a, const SharedString& b) { return std::move(a.append(b.view())); }
  friend std::string operator+(const SharedString& a, std::string_view b) { return std::string(a.view()).append(b); }
  friend std::string operator+(const SharedString& a, const char* b) { return std::string(a.view()).append(b); }
  friend std::string operator+(const char* a, const SharedString& b) { return std::string(a).append(b.view()); }
  friend std::ostream& operator<<(std::ostream& os, const SharedString& s);

 private:
  // One allocation: the header, then size bytes and a NUL.
  struct Rep {
    std::atomic<size_t> refs;
    size_t size;
  };
  static const char* chars(const Rep* r) noexcept { return reinterpret_cast<const char*>(r + 1); }
  static Rep* make(std::string_view s);
  void retain() const noexcept {
    if (rep_) rep_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  // The last handle frees the buffer. A count of one read here means this
  // is the only handle (no other thread holds one to copy from), so the
  // locked decrement, which also stalls the reads around it, is skipped: a
  // million events' lines are released this way, each the sole owner.
  void release() noexcept {
    if (rep_ && (rep_->refs.load(std::memory_order_acquire) == 1 ||
                 rep_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1))
      destroy(rep_);
  }
  static void destroy(Rep* r) noexcept;

  Rep* rep_ = nullptr;
};

}  // namespace culprit

template <>
struct std::hash<culprit::SharedString> {
  size_t operator()(const culprit::SharedString& s) const noexcept { return std::hash<std::string_view>()(s.view()); }
};

template <>
struct fmt::formatter<culprit::SharedString> : fmt::formatter<fmt::string_view> {
  template <class Context>
  auto format(const culprit::SharedString& s, Context& ctx) const {
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(s.data(), s.size()), ctx);
  }
};
