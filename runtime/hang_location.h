// Where a hang is: the verdict's `hang` detail, read off the catalog's hang
// symptoms.
//
// The rules say where a hang is as symptoms of kind hang.* (pytorch.attr from
// c10d's log lines, flight_recorder.attr from Flight Recorder dumps, nccl.attr
// from NCCL's RAS): hang.laggard (a rank that never started the collective
// its group waited in), hang.desync (ranks in different collectives),
// hang.stalled_collective (every rank in it, none finished), hang.missing_dumps
// (the members that dumped agree; some left no dump), hang.ras_behind and
// hang.ras_unresponsive. This turns them into one HangLocation, the most
// telling first: a desync, then laggards, then RAS's named process, then
// members without a dump, then a stalled collective. Demoted readings that
// name ranks count (a laggard whose node had its own fault is demoted as that
// fault's cascade, and is still where the hang was); a demoted group-wide
// reading (desync, stalled) does not, nor does a scrubbed symptom.
//
// The hang detail never changes the verdict's status; it says where to look.
//
// Thread-safety: a pure function.
#pragma once

#include <deque>
#include <optional>

#include "runtime/model.h"

namespace culprit {

std::optional<HangLocation> locate_hang(const std::deque<Symptom>& symptoms);

}  // namespace culprit
