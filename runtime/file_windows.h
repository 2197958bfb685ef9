// A log file read as a sequence of windows: window(offset, want) makes the
// file's bytes [offset, offset + want) readable in one piece (fewer at its
// end). Offsets only move forward (a split scan's parts may skip ahead).
//
// With `map`, regular files are mapped, one window at a time: the scan then
// reads the page cache in place, where read(2) first copies every byte
// (about 7% of a scan's CPU time). Only one window is mapped at a time, so
// memory stays that of a buffer. (MAP_POPULATE was measured slower: it maps
// every page up front, where a fault maps 64 KiB around it.) Anything that
// cannot be mapped (pipes, /proc files, file systems without mmap) is read.
// A mapped file that shrinks while it is read does not end the process:
// runtime/mapped_window_guard.h turns the lost pages into NULs, and
// shrank() says so.
//
// Used by the scanner (runtime/scanner.cpp) only.
// Ownership: a FileWindows owns its descriptor and its mapping; in read mode
// it fills a buffer it borrows (the Scanner's, reused from file to file),
// which must outlive it. Bytes a window shows stay valid until the next
// window() call or the destructor.
// Thread-safety: one thread at a time; the mapping guard is armed for the
// calling thread (rearm() after another FileWindows of that thread armed its
// own).
// Errors: open() and window() return false, with errno set; nothing throws
// but allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace culprit {

class FileWindows {
 public:
  // `buffer` backs read mode; it belongs to the Scanner and is reused from file
  // to file (a fresh 4 MiB vector per file was zero-filled each time, most of
  // the CPU time of many small files, and left its pages resident).
  explicit FileWindows(std::vector<char>& buffer) : buf_(buffer) {}
  FileWindows(const FileWindows&) = delete;
  FileWindows& operator=(const FileWindows&) = delete;
  ~FileWindows();

  // Maps the file when `map` and it has at least `map_min` bytes (see
  // ScanOptions::map_min_bytes), else reads it. False when it cannot be
  // opened or is not a regular file (not_regular()).
  bool open(const std::string& path, bool map, uint64_t map_min);

  // Sets `data` and `have`; false on a read error (errno set).
  bool window(uint64_t offset, size_t want, const char*& data, size_t& have);

  // Arms this thread's guard over the current mapping again (after another
  // FileWindows of the same thread armed its own).
  void rearm();

  bool not_regular() const { return not_regular_; }
  bool mapped() const { return mapped_mode_; }
  // True when the file shrank under a mapped window while it was read (its
  // missing bytes were read as NULs, see MappedWindowGuard).
  bool shrank() {
    note_fault();
    return shrank_;
  }

 private:
  bool map_window(uint64_t offset, size_t want, const char*& data, size_t& have);
  bool read_window(uint64_t offset, size_t want, const char*& data, size_t& have);
  void unmap();
  void note_fault();

  bool shrank_ = false;
  bool not_regular_ = false;

  int fd_ = -1;
  bool mapped_mode_ = false;
  uint64_t size_ = 0;
  char* map_ = nullptr;  // the mapped window: file bytes [map_offset_, map_offset_ + map_len_)
  uint64_t map_offset_ = 0;
  size_t map_len_ = 0;
  std::vector<char>& buf_;  // read mode: file bytes [buf_offset_, buf_offset_ + buf_len_)
  uint64_t buf_offset_ = 0;
  size_t buf_len_ = 0;
};

}  // namespace culprit
