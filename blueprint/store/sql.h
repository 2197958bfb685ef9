// A minimal SQL connection over SQLite and PostgreSQL (libpq), enough for
// the store: statements with `?` parameters, rows as text, transactions.
//
// SQL is written once, in the subset both engines share (TEXT, BIGINT,
// INTEGER, ON CONFLICT, RETURNING); `?` placeholders become `$1, $2, ...` for
// PostgreSQL. Values are bound, never spliced into the text.
//
// libpq is loaded when the first postgresql:// store is opened
// (blueprint/store/pq_library.h), not at start; without it, open_sql fails with an
// error naming libpq.so.5 and its Debian package. SQLite needs nothing more.
//
// Thread-safety: one connection per thread; not synchronized.
// Errors are values (false + message); no exception escapes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace culprit::blueprint {

using SqlValue = std::variant<std::nullptr_t, int64_t, std::string>;
using SqlRow = std::vector<std::optional<std::string>>;

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;
  virtual std::string dialect() const = 0;   // "sqlite" | "postgresql"
  // Runs one or more statements without parameters.
  virtual bool exec(const std::string& sql, std::string& error) = 0;
  // Runs one statement; `rows` (may be null) receives its result rows.
  virtual bool query(const std::string& sql, const std::vector<SqlValue>& params, std::vector<SqlRow>* rows,
                     std::string& error) = 0;
  // Number of rows the last INSERT/UPDATE/DELETE changed.
  virtual int64_t changes() const = 0;
};

// Opens `url`: "sqlite:PATH" (created when missing; `read_only` opens it
// with mode=ro) or "postgresql://..." / "postgres://..." (a libpq URI;
// `password`, when not empty, is passed to libpq, never put in the URI).
std::unique_ptr<SqlConnection> open_sql(const std::string& url, const std::string& password, bool read_only,
                                        std::string& error);

// A store URL with any password removed, for messages and logs.
std::string redact_url(const std::string& url);

}  // namespace culprit::blueprint
