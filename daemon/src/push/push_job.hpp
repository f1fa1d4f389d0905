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
#include "fulfillsync/api/models/order.hpp"
#include "fulfillsync/api/models/return_order.hpp"
#include "fulfillsync/api/provider.hpp"
#include "fulfillsync/config/config.hpp"
#include "fulfillsync/daemon/job/failure_backoff.hpp"
#include "fulfillsync/daemon/job/job.hpp"
#include "fulfillsync/daemon/job/sync_metrics.hpp"
#include "fulfillsync/daemon/push/source_intake.hpp"
#include "fulfillsync/daemon/store/outbound_ledger.hpp"
#include "push/result_writer.hpp"

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

RemoteRecord remote_of(const api::Order& order);
RemoteRecord remote_of(const api::CreatedOrder& created);
RemoteRecord remote_of(const api::ReturnOrder& created);

class PushJob : public Job {
 public:
  // `intake` reads the job's source table into the ledger; none when another job reads it.
  PushJob(std::string_view name, PushContext context, config::JobConfig config, Intake* intake);
  bool paused() const override;

 protected:
  // The entries taken per run: the batch size, but no more than the rate budget lets leave in
  // `within` (and at least the concurrency).
  int chunk_size(std::chrono::seconds within = std::chrono::seconds(10)) const;

  // A send the provider did not execute (429, refused credentials, never left): pending again with
  // the same body, and the job backs off (a 429 is not a failed run).
  void requeue_unsent(LedgerKind kind, const std::string& key, const api::Outcome& outcome, JobRun& run);

  // One send of a chunk, made with `before_send` as the hook that marks it: returns its outcome.
  using SendOne = std::function<boost::asio::awaitable<api::Outcome>(std::size_t i, api::BeforeSend before_send)>;

  // Makes `send(i)` for each of `keys` at the job's concurrency, each marked in_flight (as `kind`,
  // `keys[i]`) durably just before it leaves, and hands each answer to `record` as it comes, in the
  // next commit; marks and answers that come together share a commit. Stops starting new ones after
  // a 429, 401 or 403, or at a stop: those stay pending. Should a commit fail, the error is rethrown
  // once every send whose answer it lost is `unknown`. `announce`, when given, is told which sends a
  // mark covers just before the mark is committed (outside that transaction's database), and awaited:
  // the other sends go on meanwhile, and the marks that arrive join that commit once theirs are told.
  // `write_recorded`, when given, is called in each commit once its answers are handed to `record`:
  // what `record` gathered is written then, in one statement rather than one per answer.
  using Announce = std::function<boost::asio::awaitable<void>(std::vector<std::size_t> marked)>;
  boost::asio::awaitable<void> send_marked(LedgerKind kind, const std::vector<std::string>& keys, const SendOne& send,
                                           JobRun& run,
                                           const std::function<void(std::size_t, const api::Outcome&)>& record,
                                           const Announce& announce = {},
                                           const std::function<void()>& write_recorded = {});

  // Reads the source table's changes into the ledger; whether more wait (false without an intake).
  bool poll_source();

  // Whether the last run of the job left nothing of `kind` waiting and no result unwritten, and
  // nothing of it changed since (OutboundLedger::version): a run then asks the ledger nothing.
  // `own_writes_only`: the other connections' commits are not asked about again (the pragma was
  // read earlier in the run; one they made since is seen by the next run).
  bool still_idle(LedgerKind kind, bool own_writes_only = false);
  // Called once a run ends with `version` (taken before its result rows were written) and those rows
  // written: notes the job idle when nothing of `kind` waits.
  void note_if_idle(LedgerKind kind, const OutboundLedger::Version& version, bool results_written,
                    const JobRun& run);

  PushContext context_;
  api::Provider provider_;
  config::JobConfig config_;
  Intake* intake_;
  FailureBackoff backoff_;

 private:
  std::optional<OutboundLedger::Version> idle_at_;  // see still_idle
  double send_pace_ = 0;  // sends a second in the last chunk of send_marked: how far ahead its marks reach
};

}  // namespace fulfillsync::daemon
