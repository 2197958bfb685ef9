// libpq, loaded when the first PostgreSQL store is opened rather than at
// process start (docs/dependencies.md).
//
// Why: linking libpq made every `culprit` process map and relocate it and
// its dependencies (OpenSSL, Kerberos, LDAP, SASL, ...) at start (with
// libcurl about 20 ms of `culprit --help`), although only a postgresql://
// store (blueprint/store/sql.cpp, the only caller) uses it. The library is opened
// with dlopen and exactly the functions the store calls are resolved with
// dlsym. <libpq-fe.h> still declares them: every pointer below has the type
// of the declared function (decltype), so a signature that does not match the
// header does not compile.
//
// Contract: a PqLibrary whose pointers are all set; the library stays loaded
// for the life of the process (it is never closed: connections made from it
// may outlive any one user).
//
// Missing library or function: an error value naming the library, the Debian
// package that provides it and the loader's message; never a crash, never an
// exception. SQLite stores do not need libpq and never load it.
//
// Thread-safety: pq_library() may be called from any thread at any time; the
// first call loads the library (a function-local static) while any other
// waits. The outcome, loaded or not, is kept for the process: a failed load
// is not retried. load_pq_library() has no shared state.
#pragma once

#include <libpq-fe.h>

#include <string>

namespace culprit::blueprint {

// The libpq functions blueprint/store/sql.cpp calls.
struct PqLibrary {
  decltype(&PQconnectdbParams) connectdbParams = nullptr;
  decltype(&PQstatus) status = nullptr;
  decltype(&PQerrorMessage) errorMessage = nullptr;
  decltype(&PQfinish) finish = nullptr;
  decltype(&PQexec) exec = nullptr;
  decltype(&PQexecParams) execParams = nullptr;
  decltype(&PQresultStatus) resultStatus = nullptr;
  decltype(&PQresultErrorMessage) resultErrorMessage = nullptr;
  decltype(&PQcmdTuples) cmdTuples = nullptr;
  decltype(&PQntuples) ntuples = nullptr;
  decltype(&PQnfields) nfields = nullptr;
  decltype(&PQgetisnull) getisnull = nullptr;
  decltype(&PQgetvalue) getvalue = nullptr;
  decltype(&PQgetlength) getlength = nullptr;
  decltype(&PQclear) clear = nullptr;
};

// The process's libpq ("libpq.so.5"), loaded on the first call. nullptr and
// `error` set when it cannot be loaded, e.g. "the PostgreSQL store needs
// libpq.so.5 (Debian package libpq5): libpq.so.5: cannot open shared object
// file: No such file or directory".
const PqLibrary* pq_library(std::string& error);

// Opens `soname` and resolves every function of PqLibrary into `lib`. false
// and `error` set (naming `soname`) when the library or one of the functions
// is missing; the library is then closed again. Exposed for tests, which pass
// a name that does not exist.
bool load_pq_library(const char* soname, PqLibrary& lib, std::string& error);

}  // namespace culprit::blueprint
