#include "runtime/file_windows.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/read_full.h"
#include "runtime/mapped_window_guard.h"

namespace culprit {

FileWindows::~FileWindows() {
  unmap();
  if (fd_ >= 0) ::close(fd_);
}

bool FileWindows::open(const std::string& path, bool map, uint64_t map_min) {
  // O_NONBLOCK: a file replaced by a FIFO since it was listed must not
  // block the scan; only regular files are read.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd_ < 0) return false;
  struct stat st{};
  if (::fstat(fd_, &st) != 0) return false;
  if (!S_ISREG(st.st_mode)) {
    not_regular_ = true;
    return false;
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  mapped_mode_ = map && S_ISREG(st.st_mode) && st.st_size > 0 && static_cast<uint64_t>(st.st_size) >= map_min;
  if (mapped_mode_) MappedWindowGuard::install();
  size_ = static_cast<uint64_t>(st.st_size);
  return true;
}

bool FileWindows::window(uint64_t offset, size_t want, const char*& data, size_t& have) {
  if (mapped_mode_ && map_window(offset, want, data, have)) return true;
  if (mapped_mode_) {  // mapping failed: read from here on
    mapped_mode_ = false;
    unmap();
    buf_offset_ = offset;
    if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) return false;
  }
  return read_window(offset, want, data, have);
}

bool FileWindows::map_window(uint64_t offset, size_t want, const char*& data, size_t& have) {
  uint64_t end = offset + want;
  if (end > size_) {  // the file may have grown since it was opened, as a read would see
    struct stat st{};
    if (::fstat(fd_, &st) == 0) size_ = std::max<uint64_t>(size_, static_cast<uint64_t>(st.st_size));
    end = std::min(end, size_);
  }
  if (end <= offset) {
    data = nullptr;
    have = 0;
    return true;
  }
  if (!map_ || offset < map_offset_ || end > map_offset_ + map_len_) {
    unmap();
    static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t from = offset / page * page;
    void* m = ::mmap(nullptr, static_cast<size_t>(end - from), PROT_READ, MAP_PRIVATE, fd_,
                     static_cast<off_t>(from));
    if (m == MAP_FAILED) return false;
    map_ = static_cast<char*>(m);
    map_offset_ = from;
    map_len_ = static_cast<size_t>(end - from);
    MappedWindowGuard::arm(map_, map_len_);
  }
  data = map_ + (offset - map_offset_);
  have = static_cast<size_t>(end - offset);
  return true;
}

bool FileWindows::read_window(uint64_t offset, size_t want, const char*& data, size_t& have) {
  if (buf_.size() < want) buf_.resize(want);
  if (offset > buf_offset_ + buf_len_) {
    // A jump forward past what was read (a split scan's later part): seek.
    if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) return false;
    buf_offset_ = offset;
    buf_len_ = 0;
  }
  const size_t drop = static_cast<size_t>(offset - buf_offset_);
  std::memmove(buf_.data(), buf_.data() + drop, buf_len_ - drop);
  buf_len_ -= drop;
  buf_offset_ = offset;
  if (buf_len_ < want) {
    ssize_t got = read_full(fd_, buf_.data() + buf_len_, want - buf_len_);
    if (got < 0) return false;
    buf_len_ += static_cast<size_t>(got);
  }
  data = buf_.data();
  have = buf_len_;
  return true;
}

void FileWindows::unmap() {
  if (!map_) return;
  note_fault();
  MappedWindowGuard::disarm();
  ::munmap(map_, map_len_);
  map_ = nullptr;
}

void FileWindows::note_fault() {
  if (map_ && MappedWindowGuard::take_fault()) shrank_ = true;
}

void FileWindows::rearm() {
  if (map_) MappedWindowGuard::arm(map_, map_len_);
}

}  // namespace culprit
