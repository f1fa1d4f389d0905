#pragma once
// mark_tracking tells the provider the merchant has the tracking
// (POST /shipment:batchUpdateTrackingUpload), from the tracking rows the merchant database holds,
// each shipment once (TrackingMarkLedger); a slower sweep reads the orders the provider still lists
// as not uploaded, to catch anything missed. Marks call at Priority::mark.
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
  int backlog() override { return ledger_.waiting(); }
  bool paused() const override { return backoff_.paused(); }

 private:
  void take_in(JobRun& run);
  boost::asio::awaitable<void> reconcile(JobRun& run);
  boost::asio::awaitable<void> send(JobRun& run);
  void drop_unlisted(std::vector<TrackingMark>& due, JobRun& run);
  void write_results();
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
};

}  // namespace fulfillsync::daemon
