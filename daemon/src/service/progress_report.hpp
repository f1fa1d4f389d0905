#pragma once
// Every few seconds: the outbound ledger's and the tracking marks' counts, the oldest waiting entry and
// the pull jobs' lag into the metrics; each job's figures into the checkpoint store (for `status`); and for
// each job with a backlog a log line with what was done, what is left, the rate and the time it will
// take at that rate (and at the most the rate budget allows). It creates every job's series at start,
// before any run, with the last success and a pull job's data restored from the checkpoint store.
#include <chrono>
#include <map>
#include <string>

#include "fulfillsync/daemon/job/sync_metrics.hpp"
#include "fulfillsync/daemon/store/outbound_ledger.hpp"
#include "fulfillsync/daemon/store/tracking_mark_ledger.hpp"
#include "service/scheduler.hpp"

namespace fulfillsync::daemon {

class ProgressReport {
 public:
  // After the scheduler has all its jobs.
  ProgressReport(const Scheduler& scheduler, CheckpointStore& store, OutboundLedger& ledger,
                 TrackingMarkLedger& marks, SyncMetrics& metrics, int requests_per_minute);

  // One report; `elapsed` is the time since the previous one.
  void report(std::chrono::steady_clock::duration elapsed);
  // The ledgers' counts, the oldest waiting entry and the pull jobs' lag into the metrics, and the
  // jobs' figures into the checkpoint store (part of every report).
  void export_figures();
  // The status line for systemd: "Running; backlog 120 (push_orders 100, push_returns 20)".
  const std::string& status() const { return status_; }

 private:
  const Scheduler& scheduler_;
  CheckpointStore& store_;
  OutboundLedger& ledger_;
  TrackingMarkLedger& marks_;
  SyncMetrics& metrics_;
  double budget_per_second_;
  std::map<const Job*, long> settled_before_;
  // A pull job's lag until its first whole window in this process: from the data it last committed
  // before (the checkpoint store), else from this start, so that a job that never commits shows a
  // growing lag.
  std::map<const Job*, std::chrono::system_clock::time_point> as_of_before_;
  std::string status_;
};

// "1h02m", "3m05s", "12s".
std::string rough_duration(double seconds);

}  // namespace fulfillsync::daemon
