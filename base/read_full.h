// read_full: read(2) until a buffer is full or the file ends.
//
// read(2) may return fewer bytes than asked for (a signal, a pipe, a file
// system's own chunking); callers that want "this many bytes, or the rest of
// the file" loop. This is that loop, once.
//
// Returns the bytes read, fewer than `n` only at the end of the file, or -1
// with errno set on an error; EINTR is retried. Thread-safety: as read(2).
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace culprit {

ssize_t read_full(int fd, char* buf, size_t n) noexcept;

}  // namespace culprit
