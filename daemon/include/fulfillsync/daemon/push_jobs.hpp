#pragma once
// The push jobs: push_orders and push_returns create what the intake queued in the outbound ledger,
// exactly once in effect; push_cancels cancels created orders whose rows ask for it, also exactly
// once. Each run:
//   1. takes the source table's changes into the ledger (SourceIntake);
//   2. looks up `unknown` entries at the provider, several per request: a create by
//      GET ?ReferenceIds= (found: adopted; absent: the row is read again and its current version
//      queued), a cancel by GET /order?IDs= (Cancelled: done; otherwise: sent again);
//   3. sends a chunk of pending entries at bounded concurrency, each marked in_flight just before it
//      leaves (the marks of sends leaving together share a commit), and records every outcome in one
//      commit;
//   4. writes the merchant's result rows (ResultWriter).
// A 429 leaves entries pending and backs the job off; a 401/403 pauses the job and raises the alarm.
#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fulfillsync/api/client.hpp"
#include "fulfillsync/api/models/api_version.hpp"
#include "fulfillsync/config/config.hpp"
#include "fulfillsync/daemon/failure_backoff.hpp"
#include "fulfillsync/daemon/job.hpp"
#include "fulfillsync/daemon/outbound_ledger.hpp"
#include "fulfillsync/daemon/result_writer.hpp"
#include "fulfillsync/daemon/source_intake.hpp"
#include "fulfillsync/daemon/sync_metrics.hpp"

namespace fulfillsync::daemon {

// What the push jobs share.
struct PushContext {
  api::ApiClient& client;
  OutboundLedger& ledger;
  ResultWriter& results;
  SyncMetrics& metrics;
  api::ApiVersion version;
  const bool& stopping;  // set by a stop: nothing new is sent
  // An unclear send is looked up only this long after it (the request timeout): see OutboundLedger::unclear.
  std::chrono::milliseconds unclear_lookup_delay;
};

// What the provider has of an order or return, as a lookup or a create's answer shows it.
struct RemoteRecord {
  std::int64_t id = 0;
  std::string reference_id;
  std::string status;
  std::string created_at;  // ISO 8601; "" when the answer has none
};

class PushJob : public Job {
 public:
  // `poll_source` runs the intake of the job's source table and returns whether more rows wait.
  PushJob(std::string_view name, PushContext context, config::JobConfig config, std::function<bool()> poll_source);
  bool paused() const override;

 protected:
  // The entries taken per run: the batch size, but no more than about ten seconds of the rate budget.
  int chunk_size() const;

  // GET /order (/return for returns) with `filter`=`values` (comma-separated, one page): what the
  // provider has of them.
  // Nothing when the lookup failed; then `run` says so and backs off.
  boost::asio::awaitable<std::optional<std::vector<RemoteRecord>>> look_up(LedgerKind kind, std::string filter,
                                                                          std::string values, JobRun& run);

  // Sends `requests` at the job's concurrency, each marked in_flight (as `kind`, `keys[i]`) durably
  // just before it leaves, and hands each answer to `record` as it comes, in the next commit; marks
  // and answers that come together share a commit. Stops starting new ones after a 429, 401 or 403,
  // or at a stop: those stay pending. Should a commit fail, the error is rethrown once every send
  // whose answer it lost is `unknown`.
  boost::asio::awaitable<void> send_marked(LedgerKind kind, const std::vector<std::string>& keys,
                                           std::vector<api::ApiRequest> requests, JobRun& run,
                                           const std::function<void(std::size_t, const api::Outcome&)>& record);

  PushContext context_;
  config::JobConfig config_;
  std::function<bool()> poll_source_;
  FailureBackoff backoff_;
};

// push_orders (LedgerKind::order_create) or push_returns (LedgerKind::return_create).
class CreatePushJob final : public PushJob {
 public:
  // `refresh_source` reads the given rows of the job's source table again and offers their current
  // versions to the ledger (SourceIntake::refresh).
  CreatePushJob(LedgerKind kind, PushContext context, config::JobConfig config, std::function<bool()> poll_source,
                std::function<void(std::span<const std::string>)> refresh_source);
  std::string_view name() const override;
  boost::asio::awaitable<JobRun> run() override;
  int backlog() override;

 private:
  boost::asio::awaitable<void> reconcile(JobRun& run);
  boost::asio::awaitable<void> send(JobRun& run);
  // The answer to a create that left.
  void record(const LedgerEntry& entry, const api::Outcome& outcome, JobRun& run);
  // An order create whose row asks for a cancel is never sent: both entries are withdrawn.
  bool withdraw_if_cancelled(const LedgerEntry& entry);
  std::string failpoint_name(std::string_view step) const;

  LedgerKind kind_;
  std::function<void(std::span<const std::string>)> refresh_source_;
};

class CancelPushJob final : public PushJob {
 public:
  CancelPushJob(PushContext context, config::JobConfig config, std::function<bool()> poll_source)
      : PushJob("push_cancels", context, config, std::move(poll_source)) {}
  std::string_view name() const override { return "push_cancels"; }
  boost::asio::awaitable<JobRun> run() override;
  int backlog() override;

 private:
  boost::asio::awaitable<void> reconcile(JobRun& run);
  // Before cancels leave: the orders are read at the provider (GET /order?IDs=, up to 250 a
  // request), and one already Cancelled there is recorded as cancelled without a request. A cancel is
  // not idempotent for the provider's records, and a store restored from an older copy (or whose
  // result rows lagged) queues cancels that were applied before. Removes those from `keys` and
  // `order_ids`; false when the read failed (nothing is sent this run).
  boost::asio::awaitable<bool> skip_already_cancelled(std::vector<std::string>& keys,
                                                      std::vector<std::int64_t>& order_ids, JobRun& run);
  void record(const std::string& key, std::int64_t order_id, const api::Outcome& outcome, JobRun& run);
};

}  // namespace fulfillsync::daemon
