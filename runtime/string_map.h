// StringMap: a hash map from byte strings to values, for the rule engine's
// lookups that run once per event or per query call: symptom ids, index
// buckets, node numbers, memoized query values.
//
// On a million events these tables hold 10^5 entries and more, far beyond
// the caches, so a lookup costs what it misses. std::unordered_map reaches an
// entry through the bucket array, the node before it and the node itself,
// and a key longer than the small-string buffer is one more pointer away:
// four dependent misses. Here the slot array holds each key's full hash
// beside a pointer to its entry, and an entry holds its value and its key's
// bytes together, bump-allocated in large blocks: a hit is the slot and the
// entry, and a miss is usually the slot alone (a different hash).
//
// Contract: keys are compared by bytes; find() and try_emplace() take any
// std::string_view shorter than 4 GiB (a key's length is stored in 32
// bits). Entries are never removed one by one, only all at once (clear());
// a value's address stays valid until then, through any number of
// insertions. Iteration (for_each) is in insertion order, which makes it as
// deterministic as the insertions.
//
// Ownership: the map owns its entries; clear() and the destructor destroy
// the values. Moving the map moves its entries (addresses stay valid);
// copying is not allowed.
//
// Thread-safety: none; like a std::unordered_map, one writer and no readers
// at the same time, or any number of readers.
//
// Errors: nothing throws but allocation (std::bad_alloc), and whatever V's
// constructor throws.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <string_view>
#include <utility>
#include <vector>

namespace culprit {

template <class V>
class StringMap {
 public:
  StringMap() = default;
  StringMap(const StringMap&) = delete;
  StringMap& operator=(const StringMap&) = delete;
  StringMap(StringMap&& o) noexcept { swap(o); }
  StringMap& operator=(StringMap&& o) noexcept {
    if (this != &o) {
      clear();
      swap(o);
    }
    return *this;
  }
  ~StringMap() { destroy_entries(); }

  size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }

  // The value of `key`, or null.
  V* find(std::string_view key) noexcept {
    if (slots_.empty()) return nullptr;
    const uint64_t h = hash(key);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (!s.entry) return nullptr;
      if (s.hash == h && s.entry->matches(key)) return &s.entry->value;
    }
  }
  const V* find(std::string_view key) const noexcept { return const_cast<StringMap*>(this)->find(key); }

  // The value of `key`, made from `args` when the key is new; and whether it is.
  template <class... Args>
  std::pair<V*, bool> try_emplace(std::string_view key, Args&&... args) {
    if ((entries_.size() + 1) * 2 > slots_.size()) grow();
    const uint64_t h = hash(key);
    size_t i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (!s.entry) break;
      if (s.hash == h && s.entry->matches(key)) return {&s.entry->value, false};
    }
    Entry* e = make_entry(key, std::forward<Args>(args)...);
    slots_[i] = Slot{h, e};
    return {&e->value, true};
  }
  V& operator[](std::string_view key) { return *try_emplace(key).first; }

  // f(key, value) for every entry, in insertion order.
  template <class F>
  void for_each(F&& f) const {
    for (const Entry* e : entries_) f(e->key(), static_cast<const V&>(e->value));
  }

  // Destroys every value and returns the memory.
  void clear() noexcept {
    destroy_entries();
    decltype(entries_)().swap(entries_);
    decltype(slots_)().swap(slots_);
    decltype(blocks_)().swap(blocks_);
    mask_ = 0;
    block_used_ = kBlockBytes;
  }

  void swap(StringMap& o) noexcept {
    slots_.swap(o.slots_);
    entries_.swap(o.entries_);
    blocks_.swap(o.blocks_);
    std::swap(mask_, o.mask_);
    std::swap(block_used_, o.block_used_);
  }

 private:
  // An entry's key bytes follow it in its block.
  struct Entry {
    V value;
    uint32_t size;
    template <class... Args>
    Entry(uint32_t n, Args&&... args) : value(std::forward<Args>(args)...), size(n) {}
    const char* chars() const noexcept { return reinterpret_cast<const char*>(this + 1); }
    std::string_view key() const noexcept { return {chars(), size}; }
    // An empty view may carry a null data(), which memcmp must not see.
    bool matches(std::string_view k) const noexcept { return k.size() == size && (size == 0 || std::memcmp(chars(), k.data(), size) == 0); }
  };
  struct Slot {
    uint64_t hash = 0;
    Entry* entry = nullptr;  // null: empty
  };
  static constexpr size_t kBlockBytes = 64 * 1024;
  // Blocks come from new[], aligned for any fundamental type.
  static_assert(alignof(Entry) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);

  static uint64_t hash(std::string_view k) noexcept { return std::hash<std::string_view>()(k); }

  template <class... Args>
  Entry* make_entry(std::string_view key, Args&&... args) {
    constexpr size_t align = alignof(Entry);
    const size_t bytes = (sizeof(Entry) + key.size() + align - 1) / align * align;
    std::byte* at;
    if (bytes > kBlockBytes / 4) {
      // A key too long to share a block gets one of its own.
      blocks_.push_back(std::make_unique_for_overwrite<std::byte[]>(bytes));
      at = blocks_.back().get();
      // Keep filling the current block: swap the big one behind it.
      if (blocks_.size() > 1) std::swap(blocks_[blocks_.size() - 1], blocks_[blocks_.size() - 2]);
    } else {
      if (block_used_ + bytes > kBlockBytes) {
        blocks_.push_back(std::make_unique_for_overwrite<std::byte[]>(kBlockBytes));
        block_used_ = 0;
      }
      at = blocks_.back().get() + block_used_;
      block_used_ += bytes;
    }
    // Room first, so that the push below cannot throw once the value is made.
    if (entries_.size() == entries_.capacity()) entries_.reserve(std::max<size_t>(16, entries_.size() * 2));
    Entry* e = new (at) Entry(static_cast<uint32_t>(key.size()), std::forward<Args>(args)...);
    if (!key.empty()) std::memcpy(const_cast<char*>(e->chars()), key.data(), key.size());
    entries_.push_back(e);
    return e;
  }

  void grow() {
    std::vector<Slot> bigger(slots_.empty() ? 16 : slots_.size() * 2);
    const size_t mask = bigger.size() - 1;
    for (const Slot& s : slots_) {
      if (!s.entry) continue;
      size_t i = s.hash & mask;
      while (bigger[i].entry) i = (i + 1) & mask;
      bigger[i] = s;
    }
    slots_.swap(bigger);
    mask_ = mask;
  }

  void destroy_entries() noexcept {
    for (Entry* e : entries_) e->~Entry();
  }

  std::vector<Slot> slots_;                                   // a power of two, at most half full
  std::vector<Entry*> entries_;                               // insertion order
  std::vector<std::unique_ptr<std::byte[]>> blocks_;          // the last one is being filled
  size_t mask_ = 0;
  size_t block_used_ = kBlockBytes;                           // bytes used of the last block
};

}  // namespace culprit
