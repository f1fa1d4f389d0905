#pragma once
// mark_tracking tells the provider the merchant has the tracking
// (POST /shipment:batchUpdateTrackingUpload), from the tracking rows the merchant database holds,
// each shipment once (TrackingMarkLedger); a slower sweep reads the orders the provider still lists
// as not uploaded, to catch anything missed. Marks call at Priority::mark.
//
// A batch short of batch_size waits up to batch_wait for more shipments (one request per 100
// shipments in a trickle rather than one per few), counted from its oldest mark's queuing: by the
// store's clock, which a restart does not reset (the marks wait in the ledger, so a stop loses
// none), and by this process's steady clock, which a wall clock stepped back does not hold up.
#include <algorithm>
#include <cstdint>
#include <chrono>
#include <optional>
#include <unordered_set>
#include <vector>

#include "fulfillsync/api/provider.hpp"
#include "fulfillsync/config/config.hpp"
#include "fulfillsync/daemon/job/failure_backoff.hpp"
#include "fulfillsync/daemon/job/job.hpp"
#include "fulfillsync/daemon/store/tracking_mark_ledger.hpp"
#include "pull/pull_context.hpp"

namespace fulfillsync::daemon {

class MarkTrackingJob final : public Job {
 public:
  MarkTrackingJob(PullContext context, TrackingMarkLedger& ledger, config::TrackingMarksConfig config);
  std::string_view name() const override { return "mark_tracking"; }
  boost::asio::awaitable<JobRun> run() override;
  // Marks held back to fill a batch wait by design: not backlog (no progress line, no STATUS for them).
  int backlog() override;
  bool paused() const override { return backoff_.paused(); }

 private:
  void take_in(JobRun& run);
  boost::asio::awaitable<void> reconcile(JobRun& run);
  boost::asio::awaitable<void> send(JobRun& run);
  void drop_unlisted(std::vector<TrackingMark>& due, JobRun& run);
  // How much longer the batch `due` waits to fill up, or nothing: send it now.
  std::optional<std::chrono::milliseconds> batch_wait_left(const std::vector<TrackingMark>& due);
  // Whether every settled mark's result is written. A failed write fails the run (throws).
  bool write_results();
  // Whether the last run left nothing to send, look up, retry or write and no mark changed since
  // (TrackingMarkLedger::version): a run then asks the ledger nothing.
  bool still_idle();
  void note_if_idle(bool results_written, const JobRun& run);
  boost::asio::awaitable<void> sweep(JobRun& run);

  PullContext context_;
  api::Provider provider_;
  TrackingMarkLedger& ledger_;
  config::TrackingMarksConfig config_;
  FailureBackoff backoff_;
  std::int64_t intake_after_ = 0;  // the merchant's tracking rows are read in shipment id order
  // The shipments the merchant's tracking rows list as still to be marked: in the read under way, and
  // in the last complete read since this process started (`listed_in_full_`). A pending mark of a
  // shipment neither lists was queued by a ledger that is older than the merchant's rows (a store
  // restored from an older copy): the row shows the mark done (or asks for none any more).
  std::unordered_set<std::int64_t> listed_now_, listed_;
  bool listed_in_full_ = false;
  std::chrono::steady_clock::time_point next_sweep_;
  // Since when this process has held back the batch now waiting (nothing: none waits).
  std::optional<std::chrono::steady_clock::time_point> filling_since_;
  int held_back_ = 0;  // marks of that batch
  std::optional<CheckpointStore::Version> idle_at_;  // see still_idle
};

}  // namespace fulfillsync::daemon
