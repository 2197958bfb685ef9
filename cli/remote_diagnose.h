// `culprit diagnose --server URL BUNDLE`: diagnosing through a running
// `culprit serve` instead of locally.
#pragma once

namespace culprit::cli {

// True when argv is a `diagnose` invocation with --server (main hands it to
// cmd_diagnose_remote instead of diagnosing locally).
bool wants_remote_diagnose(int argc, char** argv);

// `culprit diagnose --server URL BUNDLE [--format text|json] [--explain]
// [--color ...] [--token-file F]`: prints exactly what local mode prints for
// the same bundle. Exit status: 0 verdict printed, 2 bad input or an error
// from the service (its message on stderr), 3 the service is unreachable.
int cmd_diagnose_remote(int argc, char** argv);

}  // namespace culprit::cli
