// The store reader (blueprint/store/store_reader.h) over a SQLite store written by
// the blueprint's own Store: filters, sorting, pages, the job-id prefix,
// the fleet's counts, and that every list page is found through an index.
#include "blueprint/store/store_reader.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include "blueprint/store/store.h"

using namespace culprit::blueprint;
using ojson = nlohmann::ordered_json;

namespace {

constexpr int64_t kMinute = 60LL * 1000000000LL;
constexpr int64_t kBase = 1767225600LL * 1000000000LL;  // 2026-01-01T00:00:00Z

struct TempStore {
  std::filesystem::path dir;
  std::string url;
  TempStore() {
    dir = std::filesystem::temp_directory_path() / ("culprit-reader-test." + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    url = "sqlite:" + (dir / "store.db").string();
  }
  ~TempStore() { std::filesystem::remove_all(dir); }
};

// Verdict i of the fixture: every 3rd attributed hardware on node-(i%4),
// every 3rd+1 attributed software with no culprit, the rest unattributed.
void fill(Store& store, int n) {
  for (int i = 0; i < n; ++i) {
    Attempt a;
    a.context.scheduler = i % 5 == 0 ? "static" : "slurm";
    a.cluster = "c";
    a.context.workload_id = i == 0 ? "48213" : i == 1 ? "48213_7" : i == 2 ? "482130" : std::to_string(1000 + i);
    a.key = a.context.scheduler + "/c/" + a.context.workload_id;
    a.context.start = kBase + i * kMinute - 30 * kMinute;
    a.context.end = kBase + i * kMinute;
    a.context.terminal.state = i % 2 ? "FAILED" : "TIMEOUT";
    std::string culprit = "node-" + std::to_string(i % 4);
    a.context.nodes = {culprit, "node-9"};
    std::sort(a.context.nodes.begin(), a.context.nodes.end());
    ojson v;
    v["schema"] = "culprit.verdict/v1";
    v["engine"] = {{"evaluator", "interpreter"},
                   {"catalog", {{"name", "t"}, {"version", i % 7 == 6 ? "old" : "new"}, {"digest", i % 7 == 6 ? "d-old" : "d-new"}}}};
    if (i % 3 == 0) {
      v["status"] = "attributed";
      v["domain"] = "hardware";
      v["sub_domain"] = "gpu.memory";
      v["culprit_nodes"] = ojson::array({culprit});
      v["root_cause"] = {{"symptom", "s"}, {"summary", "bad GPU"}};
    } else if (i % 3 == 1) {
      v["status"] = "attributed";
      v["domain"] = "software";
      v["sub_domain"] = "cuda_oom";
      v["culprit_nodes"] = ojson::array();
      v["root_cause"] = {{"symptom", "s"}, {"summary", "OOM"}};
    } else {
      v["status"] = "unattributed";
      v["domain"] = nullptr;
      v["sub_domain"] = nullptr;
      v["culprit_nodes"] = ojson::array();
      v["root_cause"] = nullptr;
    }
    v["symptoms"] = ojson::array();
    v["coverage"] = ojson::object();
    bool inserted = false;
    std::string err;
    REQUIRE_MESSAGE(store.record_verdict(a, "static", v, "in-process", inserted, err), err);
  }
}

std::vector<std::string> ids(const std::vector<VerdictSummary>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(r.workload_id);
  return out;
}

}  // namespace

TEST_CASE("the store reader: filters, sorting, pages and the fleet's counts") {
  TempStore t;
  std::string err, warning;
  {
    auto store = Store::open(t.url, "", err);
    REQUIRE_MESSAGE(store, err);
    fill(*store, 60);
  }
  auto r = StoreReader::open(t.url, "", err, warning);
  REQUIRE_MESSAGE(r, err);
  CHECK(warning.empty());
  CHECK(r->indexed());
  std::vector<VerdictSummary> rows;
  int64_t total = 0;
  VerdictPage page;

  VerdictFilter all;
  REQUIRE(r->list(all, page, rows, total, err));
  CHECK(total == 60);
  CHECK(rows.size() == 50);
  CHECK(rows.front().workload_id == "1059");  // newest first
  page.offset = 50;
  REQUIRE(r->list(all, page, rows, total, err));
  CHECK(rows.size() == 10);
  CHECK(rows.back().workload_id == "48213");

  page = VerdictPage{};
  VerdictFilter f;
  f.statuses = {"unattributed"};
  REQUIRE(r->list(f, page, rows, total, err));
  CHECK(total == 20);
  f = VerdictFilter{};
  f.domain = "none";
  REQUIRE(r->list(f, page, rows, total, err));
  CHECK(total == 20);
  f = VerdictFilter{};
  f.domain = "hardware";
  f.sub_domain = "gpu.memory";
  f.node = "node-1";
  f.node_is_culprit = true;
  REQUIRE(r->list(f, page, rows, total, err));
  CHECK(total == 5);  // i % 3 == 0 and i % 4 == 1: 9, 21, 33, 45, 57
  f.node_is_culprit = false;
  f.node = "node-9";  // every attempt ran there, none blamed it
  REQUIRE(r->list(f, page, rows, total, err));
  CHECK(total == 20);
  f = VerdictFilter{};
  f.catalog_version = "old";
  REQUIRE(r->list(f, page, rows, total, err));
  CHECK(total == 8);
  f = VerdictFilter{};
  f.scheduler = "static";
  f.end_from_ns = kBase + 10 * kMinute;
  f.end_before_ns = kBase + 20 * kMinute;
  REQUIRE(r->list(f, page, rows, total, err));
  CHECK(ids(rows) == std::vector<std::string>{"1015", "1010"});

  // The job id or its beginning; no wildcard of any kind.
  f = VerdictFilter{};
  f.workload_prefix = "48213";
  REQUIRE(r->list(f, page, rows, total, err));
  CHECK(total == 3);
  f.workload_prefix = "48213_";
  REQUIRE(r->list(f, page, rows, total, err));
  CHECK(ids(rows) == std::vector<std::string>{"48213_7"});
  for (const char* s : {"4821%", "%", "_", "' OR '1'='1", "48213' --"}) {
    f.workload_prefix = s;
    REQUIRE(r->list(f, page, rows, total, err));
    CHECK_MESSAGE(total == 0, s);
  }

  // Sorting, with the id as the tie-break: pages never overlap.
  page.sort = VerdictSort::Workload;
  page.descending = false;
  page.limit = 7;
  std::vector<std::string> seen;
  for (page.offset = 0; page.offset < 60; page.offset += 7) {
    REQUIRE(r->list(all, page, rows, total, err));
    for (const auto& x : rows) seen.push_back(x.workload_id);
  }
  CHECK(seen.size() == 60);
  CHECK(std::is_sorted(seen.begin(), seen.end()));
  page = VerdictPage{};
  page.sort = VerdictSort::Cause;
  page.descending = false;
  REQUIRE(r->list(all, page, rows, total, err));
  CHECK(rows.front().domain.empty());  // no domain sorts first
  CHECK(rows.back().domain == "software");

  // The fleet: per-day counts and the repeat offenders.
  std::vector<OutcomeCount> outcomes;
  REQUIRE(r->outcomes(kBase, kBase + 86400LL * 1000000000LL, 86400LL * 1000000000LL, outcomes, err));
  int64_t counted = 0;
  for (const auto& o : outcomes) counted += o.count;
  CHECK(counted == 60);
  std::vector<Offender> offenders;
  REQUIRE(r->offenders(kBase, kBase + 86400LL * 1000000000LL, 5, 10, {}, offenders, err));
  REQUIRE(offenders.size() == 4);  // node-0..3, five blamed verdicts each
  CHECK(offenders[0].node == "node-0");
  CHECK(offenders[0].attempts == 5);
  CHECK(offenders[0].causes == std::vector<std::pair<std::string, int64_t>>{{"hardware/gpu.memory", 5}});
  // By domain: the hardware causes are the node faults; no software verdict
  // of the fixture names a culprit, so asking for software finds no one.
  REQUIRE(r->offenders(kBase, kBase + 86400LL * 1000000000LL, 5, 10, {"hardware", "infrastructure"}, offenders, err));
  CHECK(offenders.size() == 4);
  REQUIRE(r->offenders(kBase, kBase + 86400LL * 1000000000LL, 1, 10, {"software"}, offenders, err));
  CHECK(offenders.empty());

  StoreFacets facets;
  REQUIRE(r->facets(facets, err));
  CHECK(facets.statuses == std::vector<std::string>{"attributed", "unattributed"});
  CHECK(facets.schedulers == std::vector<std::string>{"slurm", "static"});
  CHECK(facets.catalog_versions == std::vector<std::string>{"new", "old"});
  CHECK(facets.verdicts == 60);

  VerdictDetail d;
  bool found = false;
  REQUIRE(r->verdict(rows.back().id, d, found, err));
  CHECK(found);
  CHECK(d.verdict_json.find("culprit.verdict/v1") != std::string::npos);
  REQUIRE(r->verdict(999999, d, found, err));
  CHECK_FALSE(found);
}

TEST_CASE("every list page is read through an index, never by scanning the verdicts") {
  TempStore t;
  std::string err, warning;
  {
    auto store = Store::open(t.url, "", err);
    REQUIRE_MESSAGE(store, err);
    fill(*store, 20);
  }
  auto r = StoreReader::open(t.url, "", err, warning);
  REQUIRE_MESSAGE(r, err);
  std::vector<VerdictFilter> filters(8);
  filters[1].statuses = {"attributed", "ambiguous"};
  filters[2].domain = "hardware";
  filters[3].sub_domain = "gpu.memory";
  filters[4].node = "node-1";
  filters[5].scheduler = "slurm";
  filters[5].catalog_version = "old";
  filters[6].workload_prefix = "48";
  filters[6].end_from_ns = kBase;
  filters[7].domain = "none";
  filters[7].statuses = {"unattributed"};
  filters[7].end_before_ns = kBase + kMinute;
  for (auto sort : {VerdictSort::End, VerdictSort::Workload, VerdictSort::Status, VerdictSort::Cause, VerdictSort::Nodes,
                    VerdictSort::Scheduler, VerdictSort::State})
    for (size_t i = 0; i < filters.size(); ++i) {
      VerdictPage page;
      page.sort = sort;
      std::vector<std::string> plan;
      REQUIRE_MESSAGE(r->explain_list(filters[i], page, plan, err), err);
      std::string text;
      for (const auto& line : plan) text += line + "\n";
      bool scans = false;
      for (const auto& line : plan)
        if (line.find("SCAN v") != std::string::npos && line.find("INDEX") == std::string::npos) scans = true;
      CHECK_MESSAGE(!scans, "filter ", i, " sort ", static_cast<int>(sort), ":\n", text);
    }
}

TEST_CASE("the reader opens nothing it would create, and refuses what is not a store") {
  TempStore t;
  std::string err, warning;
  auto missing = StoreReader::open("sqlite:" + (t.dir / "missing.db").string(), "", err, warning);
  CHECK_FALSE(missing);
  CHECK_FALSE(std::filesystem::exists(t.dir / "missing.db"));
  {
    auto store = Store::open(t.url, "", err);
    REQUIRE(store);
  }
  auto r = StoreReader::open(t.url, "", err, warning);
  REQUIRE(r);
  CHECK(r->schema_version() == kStoreSchemaVersion);
}

TEST_CASE("a SQLite path that is not a regular file is refused before SQLite opens it (it would block on a FIFO)") {
  TempStore t;
  std::string err, warning;
  {
    auto store = Store::open(t.url, "", err);
    REQUIRE(store);
  }
  // Opened on a thread of its own: before the check, opening the FIFO never returned.
  auto open_soon = [](const std::string& url, std::string& error) {
    auto done = std::make_shared<std::atomic<int>>(0);  // 0 running, 1 refused, 2 opened
    auto message = std::make_shared<std::string>();
    std::thread([url, done, message] {
      std::string e, w;
      auto r = StoreReader::open(url, "", e, w);
      *message = e;
      done->store(r ? 2 : 1);
    }).detach();
    for (int i = 0; i < 100 && done->load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (done->load() != 0) error = *message;
    return done->load();
  };
  auto fifo = t.dir / "fifo.db";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(open_soon("sqlite:" + fifo.string(), err) == 1);
  CHECK(err.find("a FIFO") != std::string::npos);
  CHECK(err.find("not a regular file") != std::string::npos);
  CHECK(open_soon("sqlite:" + t.dir.string(), err) == 1);
  CHECK(err.find("a directory") != std::string::npos);
  // A FIFO where SQLite looks for the store's write-ahead log.
  std::filesystem::remove(t.dir / "store.db-wal");
  REQUIRE(mkfifo((t.dir / "store.db-wal").c_str(), 0600) == 0);
  CHECK(open_soon(t.url, err) == 1);
  CHECK(err.find("store.db-wal") != std::string::npos);
}
