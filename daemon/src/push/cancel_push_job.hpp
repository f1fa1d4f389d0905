#pragma once
// push_cancels: cancels created orders whose rows ask for it, exactly once (push_job.hpp).
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "push/push_job.hpp"

namespace fulfillsync::daemon {

class CancelPushJob final : public PushJob {
 public:
  // `intake` reads the orders table; none when push_orders runs and reads it (so that its
  // backpressure holds).
  CancelPushJob(PushContext context, config::JobConfig config, Intake* intake)
      : PushJob("push_cancels", context, config, intake) {}
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
};

}  // namespace fulfillsync::daemon
