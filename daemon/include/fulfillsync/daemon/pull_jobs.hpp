#pragma once
// The jobs that bring the provider's side back into the merchant's database, and mark tracking:
//
//  - pull_shipments walks every order the provider changed since the last committed window (less
//    an overlap), page by page (GET /order?LastUpdateStartDate=), writing order statuses,
//    shipments, items and tracking; the window's end is saved only once all of it is committed
//    (a crash repeats work, never loses it).
//  - mark_tracking tells the provider the merchant has the tracking
//    (POST /shipment:batchUpdateTrackingUpload), from the tracking rows the merchant database
//    holds, each shipment once (TrackingMarkLedger); a slower sweep reads the orders the provider
//    still lists as not uploaded, to catch anything missed.
//  - pull_returns polls the returns the daemon created until they are completed or cancelled.
//  - pull_lots reads the lot levels of every watched inventory id once per interval, spread
//    across it.
//
// All of them call at Priority::pull (marks at Priority::mark) and only read the provider's data
// from the starting point on, like the pushes.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fulfillsync/api/client.hpp"
#include "fulfillsync/api/models/api_version.hpp"
#include "fulfillsync/config/config.hpp"
#include "fulfillsync/daemon/checkpoint_store.hpp"
#include "fulfillsync/daemon/failure_backoff.hpp"
#include "fulfillsync/daemon/job.hpp"
#include "fulfillsync/daemon/sync_metrics.hpp"
#include "fulfillsync/daemon/tracking_mark_ledger.hpp"
#include "fulfillsync/merchant/merchant_database.hpp"

namespace fulfillsync::daemon {

struct PullContext {
  api::ApiClient& client;
  merchant::MerchantDatabase& merchant;
  CheckpointStore& checkpoint;
  SyncMetrics& metrics;
  api::ApiVersion version;
  const bool& stopping;
  timestamps::TimePoint starting_point;  // nothing older is read
  // An unclear send is looked up only this long after it (the request timeout): see OutboundLedger::unclear.
  std::chrono::milliseconds unclear_lookup_delay;
};

// Writes the orders of one `GET /order` page (its statuses, shipments, items and tracking) to the
// merchant database in one transaction. Returns the shipments written and the latest change seen;
// nothing, with `why`, when the call failed or its body cannot be read.
struct PageWritten {
  int shipments = 0;
  std::optional<timestamps::TimePoint> latest_change;
  std::vector<std::pair<std::int64_t, std::int64_t>> shipment_ids;  // (order id, shipment id)
};
std::optional<PageWritten> write_order_page(const PullContext& context, const api::Outcome& page, std::string& why);

class PullShipmentsJob final : public Job {
 public:
  PullShipmentsJob(PullContext context, config::PullJobConfig config);
  std::string_view name() const override { return "pull_shipments"; }
  bool pulls() const override { return true; }
  boost::asio::awaitable<JobRun> run() override;
  // 1 after a window failed, until one is committed.
  int backlog() override { return window_failed_ ? 1 : 0; }
  bool paused() const override { return backoff_.paused(); }
  std::optional<std::chrono::system_clock::time_point> data_as_of() const override { return data_as_of_; }

 private:
  boost::asio::awaitable<JobRun> walk();
  boost::asio::awaitable<void> pull_timelines(const std::vector<std::pair<std::int64_t, std::int64_t>>& shipments);

  PullContext context_;
  config::PullJobConfig config_;
  FailureBackoff backoff_;
  bool window_failed_ = false;
  std::optional<std::chrono::system_clock::time_point> data_as_of_;
};

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
  void write_results();
  boost::asio::awaitable<void> sweep(JobRun& run);

  PullContext context_;
  TrackingMarkLedger& ledger_;
  config::TrackingMarksConfig config_;
  FailureBackoff backoff_;
  std::int64_t intake_after_ = 0;  // the merchant's tracking rows are read in shipment id order
  std::chrono::steady_clock::time_point next_sweep_;
};

class PullReturnsJob final : public Job {
 public:
  PullReturnsJob(PullContext context, config::PullJobConfig config);
  std::string_view name() const override { return "pull_returns"; }
  bool pulls() const override { return true; }
  boost::asio::awaitable<JobRun> run() override;
  int backlog() override { return pass_failed_ ? 1 : 0; }
  bool paused() const override { return backoff_.paused(); }
  std::optional<std::chrono::system_clock::time_point> data_as_of() const override { return data_as_of_; }

 private:
  boost::asio::awaitable<JobRun> poll();

  PullContext context_;
  config::PullJobConfig config_;
  FailureBackoff backoff_;
  bool pass_failed_ = false;
  std::optional<std::chrono::system_clock::time_point> data_as_of_;
};

class PullLotsJob final : public Job {
 public:
  // `spread`: space the reads across the interval (the daemon); without, read them all (`once`).
  PullLotsJob(PullContext context, config::LotsConfig config, bool spread);
  std::string_view name() const override { return "pull_lots"; }
  bool pulls() const override { return true; }
  boost::asio::awaitable<JobRun> run() override;
  int backlog() override;
  bool paused() const override { return backoff_.paused(); }
  std::optional<std::chrono::system_clock::time_point> data_as_of() const override { return last_cycle_started_; }

 private:
  std::optional<std::vector<merchant::LotRecord>> lots_in(std::int64_t inventory_id, const api::Outcome& outcome);

  PullContext context_;
  config::LotsConfig config_;
  bool spread_;
  FailureBackoff backoff_;
  bool started_ = false;
  std::vector<std::int64_t> cycle_;  // the watched ids of the current cycle
  std::size_t position_ = 0;         // the next one to read
  std::chrono::steady_clock::time_point cycle_started_{};
  std::chrono::system_clock::time_point cycle_started_wall_{};
  std::optional<std::chrono::system_clock::time_point> last_cycle_started_;  // of the last whole cycle
  bool failed_in_cycle_ = false;
};

}  // namespace fulfillsync::daemon
