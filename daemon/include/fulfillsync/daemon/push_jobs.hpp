#pragma once
// The push jobs: push_orders and push_returns create what the intake queued in the outbound ledger,
// exactly once in effect; push_cancels cancels created orders whose rows ask for it. Each run:
//   1. takes the source table's changes into the ledger (SourceIntake);
//   2. looks up `unknown` entries at the provider (GET ?ReferenceIds=) and adopts or requeues them;
//   3. marks a chunk of pending entries in_flight in one commit, sends them at bounded concurrency,
//      and records every outcome in one commit;
//   4. writes the merchant's result rows (ResultWriter).
// A 429 leaves entries pending and backs the job off; a 401/403 pauses the job and raises the alarm.
#include <chrono>
#include <functional>
#include <optional>
#include <string>

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

class PushJob : public Job {
 public:
  // `poll_source` runs the intake of the job's source table and returns whether more rows wait.
  PushJob(std::string_view name, PushContext context, config::JobConfig config, std::function<bool()> poll_source);
  bool paused() const override;

 protected:
  // The entries taken per run: the batch size, but no more than about ten seconds of the rate
  // budget, so that a stop or a crash leaves few entries in flight.
  int chunk_size() const;

  PushContext context_;
  config::JobConfig config_;
  std::function<bool()> poll_source_;
  FailureBackoff backoff_;
};

// push_orders (LedgerKind::order_create) or push_returns (LedgerKind::return_create).
class CreatePushJob final : public PushJob {
 public:
  CreatePushJob(LedgerKind kind, PushContext context, config::JobConfig config, std::function<bool()> poll_source);
  std::string_view name() const override;
  boost::asio::awaitable<JobRun> run() override;
  int backlog() override;

 private:
  boost::asio::awaitable<void> reconcile(JobRun& run);
  boost::asio::awaitable<void> send(JobRun& run);
  // `answer` is nothing for an entry left unsent.
  void record(const LedgerEntry& entry, const std::optional<api::Outcome>& answer, JobRun& run);
  // An order create whose row asks for a cancel is never sent: both entries are withdrawn.
  bool withdraw_if_cancelled(const LedgerEntry& entry);
  std::string failpoint_name(std::string_view step) const;

  LedgerKind kind_;
};

class CancelPushJob final : public PushJob {
 public:
  CancelPushJob(PushContext context, config::JobConfig config, std::function<bool()> poll_source)
      : PushJob("push_cancels", context, config, std::move(poll_source)) {}
  std::string_view name() const override { return "push_cancels"; }
  boost::asio::awaitable<JobRun> run() override;
  int backlog() override;

 private:
  void record(const std::string& key, std::int64_t order_id, const std::optional<api::Outcome>& answer, JobRun& run);
};

}  // namespace fulfillsync::daemon
