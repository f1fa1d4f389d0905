#pragma once
// push_cancels: cancels created orders whose rows ask for it, exactly once (push_job.hpp).
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/merchant/sync_results.hpp"

#include "push/push_job.hpp"

namespace fulfillsync::daemon {

// Whether the provider still takes a cancel for an order in `status` (nothing of it has shipped).
bool provider_can_cancel(std::string_view status);

// What the daemon does with an order whose cancel the provider does not show (cancel_mismatches):
// sends the cancel again while the order can still be cancelled, else leaves it to an operator.
enum class CancelMismatch { send_again, surfaced };
CancelMismatch classify_cancel_mismatch(const merchant::SyncResult& row);

class CancelPushJob final : public PushJob {
 public:
  // `intake` reads the orders table; none when push_orders runs and reads it (so that its
  // backpressure holds).
  // `results` hold the provider's pulled statuses, checked against the cancels (check_intent).
  CancelPushJob(PushContext context, config::JobConfig config, Intake* intake, merchant::SyncResults& results)
      : PushJob("push_cancels", context, config, intake), sync_results_(results) {}
  std::string_view name() const override { return "push_cancels"; }
  boost::asio::awaitable<JobRun> run() override;
  int backlog() override;

 private:
  boost::asio::awaitable<void> reconcile(JobRun& run);
  // Unclear cancels (of the orders `order_ids`) by the orders' status at the provider: done when
  // Cancelled, otherwise pending again.
  void settle_unclear(std::span<const LedgerEntry> unclear, std::span<const std::int64_t> order_ids,
                      const std::map<std::int64_t, std::string>& status_of, JobRun& run);
  // Before cancels leave: the orders are read at the provider (GET /order?IDs=, up to 250 a
  // request), and one already Cancelled there is recorded as cancelled without a request. A cancel is
  // not idempotent for the provider's records, and a store restored from an older copy (or whose
  // result rows lagged) queues cancels that were applied before. Removes those from `keys` and
  // `order_ids`; false when the read failed (nothing is sent this run).
  boost::asio::awaitable<bool> skip_already_cancelled(std::vector<std::string>& keys,
                                                      std::vector<std::int64_t>& order_ids, JobRun& run);
  void record(const std::string& key, std::int64_t order_id, const api::Outcome& outcome, JobRun& run);
  // At most every kIntentCheckInterval: the orders cancelled at the merchant whose cancel the provider
  // does not show (the pulls' statuses in the result table). One that can still be cancelled is
  // queued again (the read before sending keeps it to one cancel); the others are counted in
  // fulfillsync_cancel_mismatches and left to `status` and the alert.
  void check_intent();

  merchant::SyncResults& sync_results_;
  std::optional<std::chrono::steady_clock::time_point> intent_checked_at_;
  std::set<std::string, std::less<>> surfaced_;  // at the last check: each is logged when it first shows
};

}  // namespace fulfillsync::daemon
