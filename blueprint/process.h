// Running a command and capturing what it prints (for sacct and, later,
// other scheduler clients). No shell is involved: arguments are passed as
// they are, so nothing in them is interpreted.
//
// Thread-safety: run_process() may be called from several threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace culprit::blueprint {

struct ProcessResult {
  int exit_status = -1;   // the exit code; -1 when it did not exit normally
  int signal = 0;         // the signal that ended it, 0 if none
  bool timed_out = false; // killed after the timeout
  std::string out, err;   // what it wrote (stderr cut at 64 KiB)
};

// Runs argv[0] (looked up in PATH when it has no '/') with `env` added to
// (or replacing in) the environment, stdin from /dev/null. False with
// `error` when it could not be started; otherwise true, whatever its exit
// status. A process still running after `timeout_ns` is sent SIGKILL.
bool run_process(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env, int64_t timeout_ns,
                 ProcessResult& result, std::string& error);

}  // namespace culprit::blueprint
