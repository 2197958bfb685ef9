// A compiled catalog as bytes: the ir::Catalog that parsing and semantic
// analysis made from some rule files, written so that a later process with
// the same files and the same build reads it back instead of compiling them
// again (compiler/catalog_loader.h keeps images in the cache of
// compiler/jit/cache.h).
//
// An image holds every field of the IR except the source texts: those are
// the rule files themselves, which the loader reads anyway to know whether
// they changed, and every SourceRange in the image is stored as an index into
// the list of files. decode_catalog() is given that list back (the same
// paths, in the same order) and rebuilds the pointers.
//
// An image is only meaningful to the build that wrote it: the analysis it
// records is this build's. The cache key says so (build ID, library
// versions); the format has no promise of compatibility beyond that.
//
// Malformed bytes (truncated, altered, another format) give false with the
// reason, never a crash: every length and index is checked before it is used,
// and expressions nest no deeper than the parser allows.
//
// Thread-safety: pure functions of their arguments. Nothing here throws short
// of running out of memory.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/diagnostics.h"
#include "compiler/ir.h"

namespace culprit {

// The image of `catalog`; "" when one of its SourceRanges points outside
// catalog.sources (such a range could not be rebuilt).
std::string encode_catalog(const ir::Catalog& catalog);

// Rebuilds a catalog from `image`. `sources` must be the files the image was
// made from, in load order (their paths are checked); they become
// out.sources. False with `why` when the image does not decode.
bool decode_catalog(std::string_view image, std::vector<std::shared_ptr<const SourceFile>> sources, ir::Catalog& out,
                    std::string& why);

}  // namespace culprit
