// NCCL's RAS report in its JSON form: read, and rendered as evidence lines.
//
// NCCL >= 2.24 runs a RAS thread in every process of a job; its client
// (`ncclras`, or `echo status | nc localhost 28028`) prints the job's
// communicators and what is wrong with them. The text form is read by the
// catalog's extractors line by line (stdlib-rules/nccl.attr, "NCCL RAS").
// From NCCL 2.28.7, `ncclras -f json` prints the same data as one JSON
// document instead, the raw counts with no analysis (NVIDIA/nccl
// src/ras/client_support.cc, jsonWriteHeader ... jsonWriteFooter; the
// sample in docs/userguide troubleshooting/ras.rst):
//
//   nccl_version, cuda_runtime_version, cuda_driver_version,
//   timestamp "2025-12-19 13:06:53", communicators_count,
//   communicators [{hash "0x…", secondary_hash "0x…:0x…", size,
//                   ranks_count, missing_ranks_count,
//                   ranks [{rank, host, pid, cuda_dev, nvml_dev,
//                           status {init_state, async_error, finalize_called,
//                                   destroy_flag, abort_flag},
//                           collective_counts {"Broadcast": n, "AllReduce": n, …}}],
//                   missing_ranks [{rank, host, pid, cuda_dev, nvml_dev,
//                                   status {unresponsive, considered_dead}}]}],
//   ras {collection_time_sec, timeouts_count}
//
// A `ras` file whose first non-blank byte is `{` is such a document. It is
// read whole (at most limits::kRasReportBytes) and rendered, here, into the
// analysis the text form prints, as lines of Culprit's own stable form that
// the same rules read (docs/bundle.md, "NCCL RAS reports"):
//
//   nccl ras report: 2025-12-19 13:06:53, NCCL 2.29.1, 1 communicator, 0 timeouts
//   nccl ras report: communicator 0xae94423cfbb2ef4a of 2 ranks: 1 rank answered, 1 missing
//   nccl ras report: communicator 0xae94423cfbb2ef4a of 2 ranks rank 1 missing: process 1524345 on node 172.16.64.245 managing GPU 1 is unresponsive
//   nccl ras report: communicator 0x… of 32 ranks (all the job's ranks) rank 13 launched 6649 AllReduce operations while 26 ranks launched 6650: process 483077 on node 172.16.64.211 managing GPU 5
//   nccl ras report: communicator 0x… of 32 ranks rank 3 reports asynchronous error 6 (ncclRemoteError): process … on node … managing GPU 3
//
// Per operation type, the count most ranks of a communicator share is the
// reference (ties: the larger count, the one the others must catch up
// with), and each rank off it gets a line, as the text form's outliers do.
//
// Thread-safety: pure functions. Errors are values (a sentence starting
// with a stable code, RS001 to RS003); nothing throws.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/observation.h"

namespace culprit {

// True when `bytes` (the start of a `ras` file is enough) is the JSON form:
// its first byte that is not blank is `{`.
bool is_nccl_ras_json(std::string_view bytes);

// Reads one report and appends its lines to `out` as observations of source
// `ras` on `host`, with provenance `file` and line numbers from 1. False
// with `error` (nothing appended) when it is not a report of this layout.
//
// RAS numbers a rank within its communicator. `world_size` is the job's
// number of global ranks when the context's layout gives it (0 otherwise):
// a communicator of that size holds all the job's ranks, numbered as the
// job numbers them (PyTorch's default group), and its lines say so ("of 32
// ranks (all the job's ranks)"); the rank of a smaller one (a tensor- or
// pipeline-parallel group) is only its place in that communicator.
bool read_nccl_ras_json(std::string_view bytes, const std::string& host, const std::string& file, int64_t world_size,
                        std::vector<Observation>& out, std::string& error);

}  // namespace culprit
