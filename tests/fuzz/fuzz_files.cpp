// libFuzzer: the blueprint's files collector on one collected file. The
// input's first byte chooses the source's format (auto, gzip, plain),
// whether the rest is gzip-compressed here first (so valid streams reach
// the line logic as well as broken ones), and whether the attempt has a
// window; the rest is the file, read through FilesCollector::collect (the
// window search, the range read, gzip decompression, format detection).
// Invariants: one report with a known status; observations in file order
// with strictly increasing lines and offsets, none longer than log_line,
// each the bytes of the (decompressed) file at its offset; what is held
// within file_observation_bytes; the report counts what was returned.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/limits.h"
#include "base/timestamp.h"
#include "blueprint/collect/files_collector.h"
#include "tests/fuzz/fuzz_support.h"

namespace fs = std::filesystem;
using namespace culprit;
using namespace culprit::blueprint;

namespace {

std::string gzip(std::string_view text) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string base = [] {
    char tmpl[] = "/tmp/culprit-fuzz-files-XXXXXX";
    return std::string(mkdtemp(tmpl));
  }();
  if (size == 0) return 0;
  uint8_t flags = data[0];
  std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  const char* formats[] = {"auto", "gzip", "plain", "auto"};
  std::string format = formats[flags & 3];
  bool compress = flags & 4;
  bool windowed = !(flags & 8);
  std::string file = compress ? gzip(body) : body;
  std::error_code ec;
  fs::remove_all(fs::path(base) / "n1", ec);
  fs::create_directories(fs::path(base) / "n1", ec);
  std::string path = (fs::path(base) / "n1" / (flags & 16 ? "kern.log.1.gz" : "kern.log")).string();
  {
    std::ofstream f(path, std::ios::binary);
    f << file;
  }
  FilesCollectorConfig cfg;
  cfg.sources.push_back({"kernel", base + "/{node}/kern.log*", "", format, 1});
  Attempt a;
  a.key = "static/fuzz/1";
  a.context.workload_id = a.job_id = "1";
  a.context.nodes = {"n1"};
  if (windowed) {
    a.context.start = *parse_rfc3339("2026-03-14T10:00:00Z");
    a.context.end = *parse_rfc3339("2026-03-14T11:00:00Z");
  }
  CollectRequest req;
  req.attempt = &a;
  req.scope_start = a.context.start;
  req.scope_end = a.context.end;
  Collected out;
  FilesCollector(cfg).collect(req, out);

  FUZZ_CHECK(out.collectors.size() == 1);
  const CollectorReport& r = out.collectors[0];
  FUZZ_CHECK(r.status == "ok" || r.status == "partial" || r.status == "empty" || r.status == "failed");
  FUZZ_CHECK(r.status == "ok" || !r.reason.empty());
  FUZZ_CHECK(r.observations == static_cast<int64_t>(out.observations.size()));
  FUZZ_CHECK(out.files.size() <= 1);
  // What the collector read the lines from: the file, or what it decompresses to.
  bool gz_magic = file.size() >= 2 && static_cast<unsigned char>(file[0]) == 0x1f && static_cast<unsigned char>(file[1]) == 0x8b;
  bool read_as_gzip = format == "gzip" || (format == "auto" && gz_magic);
  const std::string* text = nullptr;
  if (!read_as_gzip) text = &file;
  else if (compress) text = &body;
  else if (!gz_magic) text = &file;  // zlib reads bytes that are not gzip as they are
  int64_t held = 0, last_line = 0, last_offset = -1;
  for (const auto& o : out.observations) {
    FUZZ_CHECK(o.host == "n1" && o.source == "kernel" && o.file == path);
    FUZZ_CHECK(o.line > last_line && o.offset > last_offset);
    FUZZ_CHECK(!o.text.empty() && o.text.size() <= limits::kLogLine);
    if (text) {
      FUZZ_CHECK(static_cast<size_t>(o.offset) + o.text.size() <= text->size());
      FUZZ_CHECK(text->compare(static_cast<size_t>(o.offset), o.text.size(), o.text) == 0);
    }
    last_line = o.line;
    last_offset = o.offset;
    held += static_cast<int64_t>(sizeof(Observation) + o.text.size() + o.host.size() + o.source.size() + o.file.size());
  }
  FUZZ_CHECK(held <= static_cast<int64_t>(limits::kFileObservationBytes));
  return 0;
}
