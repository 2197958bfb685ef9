// Event-driven discovery: a receiver for Prometheus Alertmanager's webhook
// (webhook_config, payload version 4) inside `culprit run --watch`, so that
// a job-failure alert starts a poll at once instead of at the next
// watch.interval (docs/blueprint.md, "Alerts"). Polling stays the safety
// net: an alert lost, late or never sent changes when an attempt is
// attributed, never whether.
//
// Routes: POST /v1/alertmanager (the payload; 200 {"accepted": N}), GET
// /healthz. A payload must be a JSON object with an `alerts` array; each
// firing alert whose labels name a workload (the first present of
// `workload_labels`) and, when the alert has a `cluster_label`, this
// blueprint's cluster, is accepted; resolved alerts and alerts for other
// clusters are counted and ignored. Bad payloads get 400 with why; other
// paths 404; bodies over 1 MiB 413; without the bearer token (when one is
// configured) 401.
//
// The run loop takes what arrived (take()) and waits on it between polls
// (wait()); after each poll it tells the receiver which workloads that poll
// discovered (settle()), and a workload an alert named but discovery has
// not yet seen (accounting lags the alert) is polled for again: 2, 4, 8
// and 16 s later, then left to the regular polls.
//
// Thread-safety: the server runs on its own threads; every method may be
// called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace culprit::service {
class HttpServer;
}

namespace culprit::blueprint {

struct AlertReceiverConfig {
  std::string host = "127.0.0.1";
  int port = 0;                     // 0: any free port
  std::string token;                // "" : no token required
  std::string cluster;              // this blueprint's cluster
  std::string cluster_label = "cluster";
  // Label names that carry the workload id, first present wins: Slurm job
  // ids and Kubernetes job names as exporters label them.
  std::vector<std::string> workload_labels = {"workload_id", "job_id", "slurm_job_id", "jobid", "job_name"};
};

struct AlertCounts {
  int64_t payloads = 0, accepted = 0, resolved = 0, other_cluster = 0, unnamed = 0, refused = 0;
};

class AlertReceiver {
 public:
  // Binds and starts serving. Null with `error` (the address cannot be bound).
  static std::unique_ptr<AlertReceiver> start(const AlertReceiverConfig& config, std::string& error);
  ~AlertReceiver();
  AlertReceiver(const AlertReceiver&) = delete;
  AlertReceiver& operator=(const AlertReceiver&) = delete;

  int port() const { return port_; }

  // Waits up to `d` for a reason to poll now: an alert arrived, or a
  // workload an alert named is due to be looked for again. True: poll now.
  bool wait(std::chrono::milliseconds d);
  // The workload ids alerts named that a poll should look for, sorted, and
  // the lines to log (what arrived); clears the "poll now" state.
  std::vector<std::string> take(std::vector<std::string>& lines);
  // After a poll: `discovered` are the workload ids it found. Named ones not
  // found are scheduled again (see above); `lines` says what became of them.
  void settle(const std::set<std::string>& discovered, std::vector<std::string>& lines);
  AlertCounts counts() const;

  // The HTTP handler's entry (alert_receiver.cpp): the payload of one POST.
  // Returns the HTTP status and sets `answer` (JSON).
  int accept_payload(const std::string& body, std::string& answer);

 private:
  AlertReceiver() = default;

  struct Wanted {
    int tries = 0;                                  // polls that did not find it
    std::chrono::steady_clock::time_point due;      // when to poll for it again
    bool fresh = true;                              // not yet handed to a poll
  };

  AlertReceiverConfig config_;
  int port_ = 0;
  std::unique_ptr<service::HttpServer> server_;
  std::unique_ptr<class AlertHandler> handler_;
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Wanted> wanted_;
  std::vector<std::string> arrived_lines_;
  bool poll_now_ = false;
  AlertCounts counts_;
};

}  // namespace culprit::blueprint
