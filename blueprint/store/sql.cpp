#include "blueprint/store/sql.h"

#include <fmt/format.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <cerrno>

#include "blueprint/store/pq_library.h"

namespace culprit::blueprint {

namespace {

class SqliteConnection final : public SqlConnection {
 public:
  explicit SqliteConnection(sqlite3* db) : db_(db) {}
  ~SqliteConnection() override { sqlite3_close(db_); }
  std::string dialect() const override { return "sqlite"; }

  bool exec(const std::string& sql, std::string& error) override {
    char* msg = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
      error = msg ? msg : sqlite3_errmsg(db_);
      sqlite3_free(msg);
      return false;
    }
    return true;
  }

  bool query(const std::string& sql, const std::vector<SqlValue>& params, std::vector<SqlRow>* rows,
             std::string& error) override {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &st, nullptr) != SQLITE_OK) {
      error = sqlite3_errmsg(db_);
      return false;
    }
    for (size_t i = 0; i < params.size(); ++i) {
      int idx = static_cast<int>(i + 1);
      if (std::holds_alternative<std::nullptr_t>(params[i])) sqlite3_bind_null(st, idx);
      else if (auto* n = std::get_if<int64_t>(&params[i])) sqlite3_bind_int64(st, idx, *n);
      else {
        const auto& s = std::get<std::string>(params[i]);
        sqlite3_bind_text(st, idx, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
      }
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      if (!rows) continue;
      SqlRow row;
      int n = sqlite3_column_count(st);
      for (int c = 0; c < n; ++c) {
        if (sqlite3_column_type(st, c) == SQLITE_NULL) row.emplace_back(std::nullopt);
        else {
          const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
          row.emplace_back(std::string(t, static_cast<size_t>(sqlite3_column_bytes(st, c))));
        }
      }
      rows->push_back(std::move(row));
    }
    bool ok = rc == SQLITE_DONE;
    if (!ok) error = sqlite3_errmsg(db_);
    sqlite3_finalize(st);
    return ok;
  }
  int64_t changes() const override { return sqlite3_changes64(db_); }

 private:
  sqlite3* db_;
};

class PostgresConnection final : public SqlConnection {
 public:
  // libpq is loaded at the first PostgreSQL store (blueprint/store/pq_library.h).
  PostgresConnection(const PqLibrary& pq, PGconn* c) : pq_(pq), conn_(c) {}
  ~PostgresConnection() override { pq_.finish(conn_); }
  std::string dialect() const override { return "postgresql"; }

  bool exec(const std::string& sql, std::string& error) override {
    PGresult* r = pq_.exec(conn_, sql.c_str());
    bool ok = check(r, error);
    pq_.clear(r);
    return ok;
  }

  bool query(const std::string& sql, const std::vector<SqlValue>& params, std::vector<SqlRow>* rows,
             std::string& error) override {
    std::vector<std::string> text(params.size());
    std::vector<const char*> values(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      if (std::holds_alternative<std::nullptr_t>(params[i])) values[i] = nullptr;
      else {
        if (auto* n = std::get_if<int64_t>(&params[i])) text[i] = std::to_string(*n);
        else text[i] = std::get<std::string>(params[i]);
        values[i] = text[i].c_str();
      }
    }
    PGresult* r = pq_.execParams(conn_, numbered(sql).c_str(), static_cast<int>(params.size()), nullptr, values.data(),
                               nullptr, nullptr, 0);
    bool ok = check(r, error);
    if (ok) {
      const char* n = pq_.cmdTuples(r);
      changes_ = n && *n ? std::stoll(n) : 0;
      if (rows) {
        int nr = pq_.ntuples(r), nc = pq_.nfields(r);
        for (int i = 0; i < nr; ++i) {
          SqlRow row;
          for (int c = 0; c < nc; ++c) {
            if (pq_.getisnull(r, i, c)) row.emplace_back(std::nullopt);
            else row.emplace_back(std::string(pq_.getvalue(r, i, c), static_cast<size_t>(pq_.getlength(r, i, c))));
          }
          rows->push_back(std::move(row));
        }
      }
    }
    pq_.clear(r);
    return ok;
  }
  int64_t changes() const override { return changes_; }

 private:
  // `?` -> `$n`, outside string literals.
  static std::string numbered(const std::string& sql) {
    std::string out;
    int n = 0;
    bool quoted = false;
    for (char c : sql) {
      if (c == '\'') quoted = !quoted;
      if (c == '?' && !quoted) out += "$" + std::to_string(++n);
      else out += c;
    }
    return out;
  }
  bool check(PGresult* r, std::string& error) {
    auto st = pq_.resultStatus(r);
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return true;
    std::string msg = r ? pq_.resultErrorMessage(r) : pq_.errorMessage(conn_);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    error = msg.empty() ? "PostgreSQL error" : msg;
    return false;
  }
  const PqLibrary& pq_;
  PGconn* conn_;
  int64_t changes_ = 0;
};

}  // namespace

std::string redact_url(const std::string& url) {
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  size_t at = url.find('@', scheme + 3), slash = url.find('/', scheme + 3);
  if (at == std::string::npos || (slash != std::string::npos && slash < at)) return url;
  size_t colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon) + ":***" + url.substr(at);
}

std::unique_ptr<SqlConnection> open_sql(const std::string& url, const std::string& password, bool read_only,
                                        std::string& error) {
  if (url.rfind("sqlite:", 0) == 0) {
    std::string path = url.substr(7);
    sqlite3* db = nullptr;
    int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    struct stat st {};
    if (read_only && stat(path.c_str(), &st) != 0 && errno == ENOENT) {
      // The readers (dashboard, offenders) open the default culprit.db of the
      // working directory: the usual first mistake is to be elsewhere.
      error = fmt::format("there is no store at {}: `culprit run` creates it; run from the directory that holds it, or "
                          "name it with --store sqlite:PATH (or a postgresql:// URL)",
                          path);
      return nullptr;
    }
    if (sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
      error = fmt::format("cannot open the SQLite store {}: {}", path, db ? sqlite3_errmsg(db) : "out of memory");
      sqlite3_close(db);
      return nullptr;
    }
    sqlite3_busy_timeout(db, 30000);  // another blueprint or the dashboard may hold the lock briefly
    auto c = std::make_unique<SqliteConnection>(db);
    std::string e;
    if (!read_only && !c->exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;", e)) {
      error = fmt::format("cannot open the SQLite store {}: {}", path, e);
      return nullptr;
    }
    return c;
  }
  if (url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0) {
    const char* keys[] = {"dbname", "password", "application_name", "connect_timeout", nullptr};
    const char* vals[] = {url.c_str(), password.empty() ? nullptr : password.c_str(), "culprit", "10", nullptr};
    if (password.empty()) {
      keys[1] = "application_name";
      vals[1] = "culprit";
      keys[2] = "connect_timeout";
      vals[2] = "10";
      keys[3] = nullptr;
    }
    const PqLibrary* pq = pq_library(error);
    if (!pq) return nullptr;
    PGconn* conn = pq->connectdbParams(keys, vals, 1);
    if (!conn || pq->status(conn) != CONNECTION_OK) {
      std::string msg = conn ? pq->errorMessage(conn) : "out of memory";
      while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
      error = fmt::format("cannot connect to the PostgreSQL store {}: {}", redact_url(url), msg);
      pq->finish(conn);
      return nullptr;
    }
    auto c = std::make_unique<PostgresConnection>(*pq, conn);
    std::string e;
    if (!c->exec("SET client_min_messages = warning", e)) {
      error = e;
      return nullptr;
    }
    if (read_only && !c->exec("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY", e)) {
      error = e;
      return nullptr;
    }
    return c;
  }
  error = fmt::format("'{}' is not a store URL: use sqlite:PATH or postgresql://[user@]host[:port]/database", redact_url(url));
  return nullptr;
}

}  // namespace culprit::blueprint
