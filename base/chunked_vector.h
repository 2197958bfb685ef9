// ChunkedVector<T>: a sequence that grows without moving what it holds.
//
// Elements live in chunks that are never reallocated: appending constructs
// the new element in place, and every element keeps its address until it is
// removed (truncate(), clear(), destruction). A std::vector of a million
// events moves each of them about twice while it grows, and for a moment
// holds the old and the new array at once; this holds each once.
//
// Chunk sizes start small and double up to kMaxChunk elements (so the events
// of a small file cost little), then stay at kMaxChunk. Indexing is O(1).
//
// Ownership: the container owns its elements. Copying copies them; moving
// moves the chunks (element addresses survive a move of the container).
//
// Thread-safety: as a std::vector: const use from many threads, writes from
// one.
//
// Errors: nothing throws but allocation and T's own constructors.
#pragma once

#include <bit>
#include <cstddef>
#include <iterator>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace culprit {

template <class T>
class ChunkedVector {
 public:
  static constexpr size_t kFirstChunk = 32;   // elements in the first chunk; each next one doubles...
  static constexpr size_t kMaxChunk = 1024;   // ...up to this many

  ChunkedVector() = default;
  ChunkedVector(const ChunkedVector& o) {
    for (const T& x : o) push_back(x);
  }
  ChunkedVector(ChunkedVector&& o) noexcept : chunks_(std::move(o.chunks_)), size_(o.size_) { o.size_ = 0; }
  ChunkedVector& operator=(const ChunkedVector& o) {
    if (this != &o) {
      ChunkedVector copy(o);
      *this = std::move(copy);
    }
    return *this;
  }
  ChunkedVector& operator=(ChunkedVector&& o) noexcept {
    if (this != &o) {
      release();
      chunks_ = std::move(o.chunks_);
      size_ = o.size_;
      o.size_ = 0;
    }
    return *this;
  }
  ~ChunkedVector() { release(); }

  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  T& operator[](size_t i) noexcept { return *slot(i); }
  const T& operator[](size_t i) const noexcept { return *slot(i); }
  T& front() noexcept { return (*this)[0]; }
  const T& front() const noexcept { return (*this)[0]; }
  T& back() noexcept { return (*this)[size_ - 1]; }
  const T& back() const noexcept { return (*this)[size_ - 1]; }

  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (chunk_of(size_) == chunks_.size()) grow();
    T* p = slot(size_);
    ::new (static_cast<void*>(p)) T(std::forward<Args>(args)...);
    ++size_;
    return *p;
  }
  void push_back(const T& x) { emplace_back(x); }
  void push_back(T&& x) { emplace_back(std::move(x)); }

  // Destroys the elements from index n on (n <= size()); chunks no longer
  // used are freed.
  void truncate(size_t n) noexcept {
    while (size_ > n) slot(--size_)->~T();
    const size_t keep = size_ == 0 ? 0 : chunk_of(size_ - 1) + 1;
    while (chunks_.size() > keep) {
      ::operator delete(chunks_.back(), std::align_val_t(alignof(T)));
      chunks_.pop_back();
    }
  }
  void clear() noexcept { truncate(0); }

  template <class Ref, class Owner>
  class basic_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = std::remove_reference_t<Ref>*;
    using reference = Ref;
    basic_iterator() = default;
    basic_iterator(Owner* o, size_t i) : o_(o), i_(i) {}
    reference operator*() const { return (*o_)[i_]; }
    pointer operator->() const { return &(*o_)[i_]; }
    reference operator[](difference_type n) const { return (*o_)[static_cast<size_t>(static_cast<difference_type>(i_) + n)]; }
    basic_iterator& operator++() { ++i_; return *this; }
    basic_iterator operator++(int) { auto t = *this; ++i_; return t; }
    basic_iterator& operator--() { --i_; return *this; }
    basic_iterator operator--(int) { auto t = *this; --i_; return t; }
    basic_iterator& operator+=(difference_type n) { i_ = static_cast<size_t>(static_cast<difference_type>(i_) + n); return *this; }
    basic_iterator& operator-=(difference_type n) { return *this += -n; }
    friend basic_iterator operator+(basic_iterator a, difference_type n) { return a += n; }
    friend basic_iterator operator+(difference_type n, basic_iterator a) { return a += n; }
    friend basic_iterator operator-(basic_iterator a, difference_type n) { return a -= n; }
    friend difference_type operator-(const basic_iterator& a, const basic_iterator& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const basic_iterator& a, const basic_iterator& b) { return a.i_ == b.i_; }
    friend auto operator<=>(const basic_iterator& a, const basic_iterator& b) { return a.i_ <=> b.i_; }

   private:
    Owner* o_ = nullptr;
    size_t i_ = 0;
  };
  using iterator = basic_iterator<T&, ChunkedVector>;
  using const_iterator = basic_iterator<const T&, const ChunkedVector>;
  iterator begin() noexcept { return {this, 0}; }
  iterator end() noexcept { return {this, size_}; }
  const_iterator begin() const noexcept { return {this, 0}; }
  const_iterator end() const noexcept { return {this, size_}; }

 private:
  static constexpr size_t kLog2First = std::bit_width(kFirstChunk) - 1;
  static constexpr size_t kGrowing = std::bit_width(kMaxChunk / kFirstChunk);  // chunks before the fixed size
  static constexpr size_t kGrowingElements = kFirstChunk * ((size_t{1} << kGrowing) - 1);
  static_assert(std::has_single_bit(kFirstChunk) && std::has_single_bit(kMaxChunk) && kMaxChunk >= kFirstChunk);

  // Chunk k < kGrowing holds kFirstChunk << k elements, from index
  // kFirstChunk * (2^k - 1); later chunks hold kMaxChunk each.
  static size_t chunk_of(size_t i) noexcept {
    if (i < kGrowingElements) return std::bit_width(i + kFirstChunk) - 1 - kLog2First;
    return kGrowing + (i - kGrowingElements) / kMaxChunk;
  }
  static size_t capacity_of(size_t k) noexcept { return k < kGrowing ? kFirstChunk << k : kMaxChunk; }
  T* slot(size_t i) const noexcept {
    if (i < kGrowingElements) {
      const size_t j = i + kFirstChunk;
      const size_t k = std::bit_width(j) - 1;  // chunk k - kLog2First starts at (1 << k) - kFirstChunk
      return chunks_[k - kLog2First] + (j - (size_t{1} << k));
    }
    const size_t rest = i - kGrowingElements;
    return chunks_[kGrowing + rest / kMaxChunk] + rest % kMaxChunk;
  }
  void grow() {
    const size_t n = capacity_of(chunks_.size());
    chunks_.reserve(chunks_.size() + 1);
    chunks_.push_back(static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(alignof(T)))));
  }
  void release() noexcept {
    clear();
    chunks_.clear();
  }

  std::vector<T*> chunks_;
  size_t size_ = 0;
};

}  // namespace culprit
