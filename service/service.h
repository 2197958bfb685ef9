// The attribution service: `culprit serve` and `culprit diagnose --server`.
//
// This is the only header the command-line front end includes from service/.
// Both entry points parse their own arguments (argv[1] is the command name),
// print their own help and errors, and return a process exit status; no
// exception escapes them.
//
//   culprit serve [options]                    docs/service.md
//   culprit diagnose --server URL BUNDLE       sends the bundle's evidence to a
//                                              running service, prints its verdict
#pragma once

namespace culprit::service {

// `culprit serve`: compiles and self-tests the catalog, serves until SIGTERM
// or SIGINT, drains in-flight requests, returns 0. Returns 1 when the catalog
// fails one of its inline tests, 2 on bad usage, rules that do not compile or
// an address that cannot be bound.
int serve_command(int argc, char** argv);

// True when argv is a `diagnose` invocation with --server (so the CLI hands
// it to diagnose_remote_command instead of diagnosing locally).
bool wants_remote_diagnose(int argc, char** argv);

// `culprit diagnose --server URL BUNDLE [--format text|json] [--explain]
// [--color ...] [--token-file F]`: prints exactly what local mode prints for
// the same bundle. Exit status: 0 verdict printed, 2 bad input or an error
// from the service (its message on stderr), 3 the service is unreachable.
int diagnose_remote_command(int argc, char** argv);

}  // namespace culprit::service
