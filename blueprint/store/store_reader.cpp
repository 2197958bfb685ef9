#include "blueprint/store/store_reader.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>

#include "blueprint/store/store.h"

namespace culprit::blueprint {

namespace {

std::string str(const std::optional<std::string>& v) { return v ? *v : std::string(); }
std::optional<int64_t> opt_i64(const std::optional<std::string>& v) {
  if (!v || v->empty()) return std::nullopt;
  return std::stoll(*v);
}
int64_t i64(const std::optional<std::string>& v) { return opt_i64(v).value_or(0); }

// The list's columns, in VerdictSummary order. The attempt key and the
// catalog are looked up per returned row, after LIMIT, not joined first.
const char* kSummaryColumns =
    "v.id, v.scheduler, v.cluster, v.workload_id, "
    "(SELECT a.attempt_key FROM attempts a WHERE a.id = v.attempt_ref), "
    "(SELECT a.attempt_no FROM attempts a WHERE a.id = v.attempt_ref), "
    "v.state, v.start_ns, v.end_ns, v.node_count, v.status, v.domain, v.sub_domain, v.culprit_nodes, v.root_cause, "
    "v.root_cause_summary, "
    "(SELECT c.name FROM catalogs c WHERE c.id = v.catalog_ref), "
    "(SELECT c.version FROM catalogs c WHERE c.id = v.catalog_ref)";
constexpr size_t kSummaryWidth = 18;

VerdictSummary summary_of(const SqlRow& r) {
  VerdictSummary s;
  s.id = i64(r[0]);
  s.scheduler = str(r[1]);
  s.cluster = str(r[2]);
  s.workload_id = str(r[3]);
  s.attempt_key = str(r[4]);
  s.attempt_no = i64(r[5]);
  s.state = str(r[6]);
  s.start_ns = opt_i64(r[7]);
  s.end_ns = opt_i64(r[8]);
  s.node_count = i64(r[9]);
  s.status = str(r[10]);
  s.domain = str(r[11]);
  s.sub_domain = str(r[12]);
  s.culprit_nodes = str(r[13]);
  s.root_cause = str(r[14]);
  s.root_cause_summary = str(r[15]);
  s.catalog_name = str(r[16]);
  s.catalog_version = str(r[17]);
  return s;
}

// ORDER BY per sort key and direction. Every key ends in the id, so pages
// never overlap or skip a row; the secondary keys follow the primary
// direction so that one index can be walked backwards or forwards.
std::string order_by(VerdictSort sort, bool desc) {
  const char* keys = "v.end_ns, v.id";
  switch (sort) {
    case VerdictSort::End: keys = "v.end_ns, v.id"; break;
    case VerdictSort::Workload: keys = "v.workload_id, v.id"; break;
    case VerdictSort::Status: keys = "v.status, v.end_ns, v.id"; break;
    case VerdictSort::Cause: keys = "v.domain, v.sub_domain, v.end_ns, v.id"; break;
    case VerdictSort::Nodes: keys = "v.node_count, v.end_ns, v.id"; break;
    case VerdictSort::Scheduler: keys = "v.scheduler, v.end_ns, v.id"; break;
    case VerdictSort::State: keys = "v.state, v.end_ns, v.id"; break;
  }
  std::string out = " ORDER BY ";
  std::string k = keys;
  size_t start = 0;
  while (start < k.size()) {
    size_t comma = k.find(", ", start);
    std::string col = k.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (start) out += ", ";
    out += col + (desc ? " DESC" : " ASC");
    if (comma == std::string::npos) break;
    start = comma + 2;
  }
  return out;
}

// The WHERE clause of a filter; values go to `params`, never into the text.
std::string where_of(const VerdictFilter& f, bool bytewise, std::vector<SqlValue>& params) {
  std::vector<std::string> conds;
  if (f.end_from_ns) {
    conds.push_back("v.end_ns >= ?");
    params.emplace_back(*f.end_from_ns);
  }
  if (f.end_before_ns) {
    conds.push_back("v.end_ns < ?");
    params.emplace_back(*f.end_before_ns);
  }
  if (!f.statuses.empty()) {
    std::string in = "v.status IN (";
    for (size_t i = 0; i < f.statuses.size(); ++i) {
      in += i ? ", ?" : "?";
      params.emplace_back(f.statuses[i]);
    }
    conds.push_back(in + ")");
  }
  if (!f.domain.empty()) {
    conds.push_back("v.domain = ?");
    params.emplace_back(f.domain == kNoDomain ? std::string() : f.domain);
  }
  if (!f.sub_domain.empty()) {
    conds.push_back("v.sub_domain = ?");
    params.emplace_back(f.sub_domain);
  }
  if (!f.node.empty()) {
    if (f.node_is_culprit)
      conds.push_back("v.id IN (SELECT verdict_ref FROM verdict_culprits WHERE node = ?)");
    else
      conds.push_back("v.attempt_ref IN (SELECT attempt_ref FROM attempt_nodes WHERE node = ?)");
    params.emplace_back(f.node);
  }
  if (!f.scheduler.empty()) {
    conds.push_back("v.scheduler = ?");
    params.emplace_back(f.scheduler);
  }
  if (!f.catalog_version.empty()) {
    conds.push_back("v.catalog_ref IN (SELECT id FROM catalogs WHERE version = ?)");
    params.emplace_back(f.catalog_version);
  }
  if (!f.workload_prefix.empty()) {
    // The id itself, or ids that begin with it ("48213" finds "48213_7" and
    // "48213-by-template"). Where text compares bytewise (SQLite; a
    // PostgreSQL database whose collation is C or POSIX) a prefix is an
    // index range [p, p + U+10FFFF); under another collation PostgreSQL
    // compares the leading characters (a scan of its small heap rows, the
    // verdict JSON being stored apart).
    if (bytewise) {
      conds.push_back("v.workload_id >= ? AND v.workload_id < ?");
      params.emplace_back(f.workload_prefix);
      params.emplace_back(f.workload_prefix + "\xF4\x8F\xBF\xBF");
    } else {
      conds.push_back("substr(v.workload_id, 1, ?) = ?");
      int64_t chars = 0;
      for (unsigned char c : f.workload_prefix) chars += (c & 0xC0) != 0x80;
      params.emplace_back(chars);
      params.emplace_back(f.workload_prefix);
    }
  }
  if (conds.empty()) return "";
  std::string out = " WHERE ";
  for (size_t i = 0; i < conds.size(); ++i) out += (i ? " AND " : "") + conds[i];
  return out;
}

// Distinct values of an indexed column, one index probe per value (a loose
// index scan), so the filter form costs the same on 100 rows or 10 million.
bool distinct_values(SqlConnection& db, const char* column, std::vector<std::string>& out, std::string& error) {
  std::string sql = fmt::format(
      "WITH RECURSIVE d(x) AS (SELECT MIN({0}) FROM verdicts UNION ALL "
      "SELECT (SELECT MIN({0}) FROM verdicts WHERE {0} > d.x) FROM d WHERE d.x IS NOT NULL) "
      "SELECT x FROM d WHERE x IS NOT NULL",
      column);
  std::vector<SqlRow> rows;
  if (!db.query(sql, {}, &rows, error)) return false;
  out.clear();
  for (const auto& r : rows) out.push_back(str(r[0]));
  return true;
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

// A SQLite store, and the journal files SQLite opens beside it, must be
// regular files when they exist: SQLite would block for ever opening a FIFO
// (no writer), and a device is not a store. stat() does not open, so it
// cannot block. (A path swapped between this check and SQLite's open is a
// race only someone who can write the store's directory can run, and such
// a user could replace the store itself.) A path that does not exist is
// left to SQLite, which says so (read-only: it creates nothing).
bool check_sqlite_files(const std::string& path, std::string& error) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::string p = path + suffix;
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) continue;
    if (!S_ISREG(st.st_mode)) {
      error = *suffix ? fmt::format("the SQLite store {} has {} beside it ({}), not a regular file: SQLite would "
                                    "open it; remove it or give another store",
                                    path, file_kind(st.st_mode), p)
                      : fmt::format("the SQLite store {} is {}, not a regular file: give the file `culprit run` wrote",
                                    path, file_kind(st.st_mode));
      return false;
    }
  }
  return true;
}

}  // namespace

std::unique_ptr<StoreReader> StoreReader::open(const std::string& url, const std::string& password, std::string& error,
                                               std::string& warning) {
  std::unique_ptr<StoreReader> r(new StoreReader());
  r->url_ = redact_url(url);
  if (url.rfind("sqlite:", 0) == 0 && !check_sqlite_files(url.substr(7), error)) return nullptr;
  r->db_ = open_sql(url, password, true, error);
  if (!r->db_) return nullptr;
  SqlConnection& db = *r->db_;
  std::vector<SqlRow> rows;
  if (db.dialect() == "sqlite") {
    // Opened with SQLITE_OPEN_READONLY already; query_only refuses writes
    // even through a statement that would otherwise be allowed (a temp table).
    if (!db.exec("PRAGMA query_only = ON", error)) return nullptr;
  } else {
    // Every transaction of the session is READ ONLY (set by open_sql); check
    // that the server agrees before reading anything. A statement that runs
    // away is cut off rather than holding a connection of the pool.
    if (!db.query("SHOW transaction_read_only", {}, &rows, error)) return nullptr;
    if (rows.empty() || str(rows[0][0]) != "on") {
      error = fmt::format("store {}: the session is not read-only", r->url_);
      return nullptr;
    }
    if (!db.exec("SET statement_timeout = '20s'", error)) return nullptr;
    rows.clear();
    if (!db.query("SELECT datcollate FROM pg_database WHERE datname = current_database()", {}, &rows, error)) return nullptr;
    std::string collate = rows.empty() ? "" : str(rows[0][0]);
    r->bytewise_ = collate == "C" || collate == "POSIX" || collate == "C.UTF-8" || collate == "C.utf8";
  }
  rows.clear();
  std::string e;
  if (!db.query("SELECT COALESCE(MAX(version), 0) FROM schema_version", {}, &rows, e)) {
    error = fmt::format("store {} is not a Culprit store (no schema_version table: {}); write it with `culprit run` first",
                        r->url_, e);
    return nullptr;
  }
  r->version_ = rows.empty() ? 0 : static_cast<int>(i64(rows[0][0]));
  if (r->version_ < 1) {
    error = fmt::format("store {} has no schema yet; write it with `culprit run` first", r->url_);
    return nullptr;
  }
  if (r->version_ > kStoreSchemaVersion) {
    error = fmt::format("store {}: its schema is version {}, newer than this culprit reads ({}); upgrade culprit", r->url_,
                        r->version_, kStoreSchemaVersion);
    return nullptr;
  }
  // The readers' indexes (store.cpp, kReaderIndexes) come with any writer
  // of this culprit; a store last opened by an older one lacks them.
  rows.clear();
  if (!db.query(db.dialect() == "sqlite"
                    ? "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'verdicts_list'"
                    : "SELECT COUNT(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'verdicts_list'",
                {}, &rows, error))
    return nullptr;
  r->indexed_ = !rows.empty() && i64(rows[0][0]) > 0;
  if (!r->indexed_)
    warning = fmt::format(
        "store {} lacks the indexes the dashboard's filters use (it was last written by an older culprit), so large "
        "lists are slow. Run `culprit run` once with this culprit to add them (the dashboard never writes)",
        r->url_);
  return r;
}

namespace {

// Whether the page is an early-stopping walk of one narrow index: no filter
// (any sort key has its own index), or one filter (domain + sub_domain
// count as one) with the default sort by time. Anything else reads the
// wide verdicts_list index, where every filter and sort column is at hand
// without touching a row (SQLite's planner, without statistics, would pick
// a narrow index and then read every matching row).
bool aligned(const VerdictFilter& f, const VerdictPage& p) {
  int filters = !f.statuses.empty() + !f.node.empty() + !f.scheduler.empty() + !f.catalog_version.empty() +
                !f.workload_prefix.empty() + (!f.domain.empty() || !f.sub_domain.empty());
  bool timed = f.end_from_ns || f.end_before_ns;
  if (filters == 0) return p.sort == VerdictSort::End || !timed;
  return filters == 1 && p.sort == VerdictSort::End && (f.domain.empty() || f.sub_domain.empty() || !timed);
}

}  // namespace

std::string StoreReader::list_hint(const VerdictFilter& filter, const VerdictPage& page) const {
  if (db_->dialect() != "sqlite" || !indexed_ || aligned(filter, page)) return "";
  return " INDEXED BY verdicts_list";
}

bool StoreReader::list(const VerdictFilter& filter, const VerdictPage& page, std::vector<VerdictSummary>& out,
                       int64_t& total, std::string& error) {
  std::vector<SqlValue> params;
  std::string where = where_of(filter, bytewise_, params);
  std::string from = " FROM verdicts v" + list_hint(filter, page);
  std::vector<SqlRow> rows;
  if (!db_->query("SELECT COUNT(*)" + from + where, params, &rows, error)) return false;
  total = rows.empty() ? 0 : i64(rows[0][0]);
  rows.clear();
  out.clear();
  if (total == 0 || page.offset >= total) return true;
  // The page's ids first (from an index), then those rows only.
  params.emplace_back(page.limit);
  params.emplace_back(page.offset);
  if (!db_->query("SELECT v.id" + from + where + order_by(page.sort, page.descending) + " LIMIT ? OFFSET ?", params, &rows,
                  error))
    return false;
  if (rows.empty()) return true;
  std::vector<SqlValue> ids;
  std::string in;
  for (const auto& r : rows) {
    ids.emplace_back(i64(r[0]));
    in += in.empty() ? "?" : ", ?";
  }
  std::vector<SqlRow> full;
  if (!db_->query(fmt::format("SELECT {} FROM verdicts v WHERE v.id IN ({})", kSummaryColumns, in), ids, &full, error))
    return false;
  std::map<int64_t, VerdictSummary> by_id;
  for (const auto& r : full)
    if (r.size() == kSummaryWidth) {
      auto s = summary_of(r);
      by_id.emplace(s.id, std::move(s));
    }
  for (const auto& id : ids) {
    auto it = by_id.find(std::get<int64_t>(id));
    if (it != by_id.end()) out.push_back(std::move(it->second));
  }
  return true;
}

bool StoreReader::explain_list(const VerdictFilter& filter, const VerdictPage& page, std::vector<std::string>& plan,
                               std::string& error) {
  std::vector<SqlValue> params;
  std::string where = where_of(filter, bytewise_, params);
  params.emplace_back(page.limit);
  params.emplace_back(page.offset);
  bool sqlite = db_->dialect() == "sqlite";
  std::vector<SqlRow> rows;
  if (!db_->query(std::string(sqlite ? "EXPLAIN QUERY PLAN" : "EXPLAIN") + " SELECT v.id FROM verdicts v" +
                      list_hint(filter, page) + where + order_by(page.sort, page.descending) + " LIMIT ? OFFSET ?",
                  params, &rows, error))
    return false;
  plan.clear();
  for (const auto& r : rows) plan.push_back(str(r[sqlite ? r.size() - 1 : 0]));
  return true;
}

bool StoreReader::verdict(int64_t id, VerdictDetail& d, bool& found, std::string& error) {
  std::vector<SqlRow> rows;
  found = false;
  if (!db_->query(fmt::format("SELECT {}, a.state, a.exit_code, a.submit_ns, a.nodes, a.steps, a.discovered_by, "
                              "v.attributed_by, v.evaluator, c.digest, v.verdict_sha256, w.name, w.user_name, "
                              "w.partition_name, v.attributed_ns, v.verdict_json "
                              "FROM verdicts v JOIN attempts a ON a.id = v.attempt_ref "
                              "JOIN workloads w ON w.id = a.workload_ref JOIN catalogs c ON c.id = v.catalog_ref "
                              "WHERE v.id = ?",
                              kSummaryColumns),
                  {id}, &rows, error))
    return false;
  if (rows.empty()) return true;
  const SqlRow& r = rows[0];
  d.summary = summary_of(r);
  size_t i = kSummaryWidth;
  d.attempt_state = str(r[i++]);
  d.exit_code = opt_i64(r[i++]);
  d.submit_ns = opt_i64(r[i++]);
  d.nodes = str(r[i++]);
  d.steps_json = str(r[i++]);
  d.discovered_by = str(r[i++]);
  d.attributed_by = str(r[i++]);
  d.evaluator = str(r[i++]);
  d.catalog_digest = str(r[i++]);
  d.verdict_sha256 = str(r[i++]);
  d.workload_name = str(r[i++]);
  d.user_name = str(r[i++]);
  d.partition_name = str(r[i++]);
  d.attributed_ns = i64(r[i++]);
  d.verdict_json = str(r[i++]);
  found = true;
  return true;
}

bool StoreReader::related(int64_t id, std::vector<RelatedVerdict>& out, std::string& error) {
  std::vector<SqlRow> rows;
  out.clear();
  if (!db_->query("SELECT v2.id, a2.attempt_key, v2.status, v2.domain, v2.sub_domain, c.version, v2.end_ns "
                  "FROM verdicts v JOIN attempts a ON a.id = v.attempt_ref "
                  "JOIN attempts a2 ON a2.workload_ref = a.workload_ref "
                  "JOIN verdicts v2 ON v2.attempt_ref = a2.id JOIN catalogs c ON c.id = v2.catalog_ref "
                  "WHERE v.id = ? AND v2.id <> v.id ORDER BY v2.end_ns DESC, v2.id DESC LIMIT 100",
                  {id}, &rows, error))
    return false;
  for (const auto& r : rows) {
    RelatedVerdict x;
    x.id = i64(r[0]);
    x.attempt_key = str(r[1]);
    x.status = str(r[2]);
    x.domain = str(r[3]);
    x.sub_domain = str(r[4]);
    x.catalog_version = str(r[5]);
    x.end_ns = opt_i64(r[6]);
    out.push_back(std::move(x));
  }
  return true;
}

bool StoreReader::facets(StoreFacets& f, std::string& error) {
  SqlConnection& db = *db_;
  if (!distinct_values(db, "status", f.statuses, error) || !distinct_values(db, "domain", f.domains, error) ||
      !distinct_values(db, "sub_domain", f.sub_domains, error) ||
      !distinct_values(db, "scheduler", f.schedulers, error))
    return false;
  std::vector<SqlRow> rows;
  if (!db.query("SELECT DISTINCT version FROM catalogs ORDER BY version", {}, &rows, error)) return false;
  f.catalog_versions.clear();
  for (const auto& r : rows) f.catalog_versions.push_back(str(r[0]));
  rows.clear();
  if (!db.query("SELECT MIN(end_ns), MAX(end_ns), (SELECT COUNT(*) FROM verdicts) FROM verdicts", {}, &rows, error))
    return false;
  if (!rows.empty()) {
    f.first_end_ns = opt_i64(rows[0][0]);
    f.last_end_ns = opt_i64(rows[0][1]);
    f.verdicts = i64(rows[0][2]);
  }
  return true;
}

bool StoreReader::outcomes(int64_t from_ns, int64_t before_ns, int64_t bucket_ns, std::vector<OutcomeCount>& out,
                           std::string& error) {
  std::vector<SqlRow> rows;
  out.clear();
  if (bucket_ns <= 0) {
    error = "the bucket must be positive";
    return false;
  }
  // Buckets are counted from `from` so that a window starting mid-day still
  // has whole buckets; the caller aligns `from` to midnight UTC.
  if (!db_->query("SELECT (v.end_ns - ?) / ?, v.status, v.domain, COUNT(*) FROM verdicts v "
                  "WHERE v.end_ns >= ? AND v.end_ns < ? GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
                  {from_ns, bucket_ns, from_ns, before_ns}, &rows, error))
    return false;
  for (const auto& r : rows) {
    OutcomeCount c;
    c.bucket_start_ns = from_ns + i64(r[0]) * bucket_ns;
    c.status = str(r[1]);
    c.domain = str(r[2]);
    c.count = i64(r[3]);
    out.push_back(std::move(c));
  }
  return true;
}

bool StoreReader::offenders(int64_t from_ns, int64_t before_ns, int64_t min_attempts, int64_t limit,
                            const std::vector<std::string>& domains, std::vector<Offender>& out, std::string& error) {
  std::vector<SqlRow> rows, totals;
  out.clear();
  std::vector<SqlValue> params = {from_ns, before_ns};
  std::string in_domains;
  for (const auto& d : domains) {
    in_domains += in_domains.empty() ? " AND c.domain IN (?" : ", ?";
    params.push_back(d);
  }
  if (!in_domains.empty()) in_domains += ")";
  // Attempts, not verdicts: an attempt judged by two catalogs is one fault
  // (and counts once in its node's total even if they disagree on the class).
  if (!db_->query("SELECT c.node, c.domain, c.sub_domain, COUNT(DISTINCT v.attempt_ref), MAX(c.end_ns) "
                  "FROM verdict_culprits c JOIN verdicts v ON v.id = c.verdict_ref "
                  "WHERE c.end_ns >= ? AND c.end_ns < ? AND c.status = 'attributed'" + in_domains +
                      " GROUP BY c.node, c.domain, c.sub_domain",
                  params, &rows, error) ||
      !db_->query("SELECT c.node, COUNT(DISTINCT v.attempt_ref) FROM verdict_culprits c JOIN verdicts v ON v.id = c.verdict_ref "
                  "WHERE c.end_ns >= ? AND c.end_ns < ? AND c.status = 'attributed'" + in_domains + " GROUP BY c.node",
                  params, &totals, error))
    return false;
  std::map<std::string, Offender> by_node;
  for (const auto& r : rows) {
    Offender& o = by_node[str(r[0])];
    o.node = str(r[0]);
    o.causes.emplace_back(str(r[1]) + "/" + str(r[2]), i64(r[3]));
    auto last = opt_i64(r[4]);
    if (last && (!o.last_end_ns || *last > *o.last_end_ns)) o.last_end_ns = last;
  }
  for (const auto& r : totals) by_node[str(r[0])].attempts = i64(r[1]);
  for (auto& [node, o] : by_node) {
    if (o.attempts < min_attempts) continue;
    std::sort(o.causes.begin(), o.causes.end(),
              [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
    out.push_back(std::move(o));
  }
  std::sort(out.begin(), out.end(), [](const Offender& a, const Offender& b) {
    return a.attempts != b.attempts ? a.attempts > b.attempts : a.node < b.node;
  });
  if (limit >= 0 && static_cast<int64_t>(out.size()) > limit) out.resize(static_cast<size_t>(limit));
  return true;
}

}  // namespace culprit::blueprint
