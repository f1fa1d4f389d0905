#pragma once
// pull_lots reads the lot levels of every watched inventory id once per interval, spread across it.
// A watched row may name a SKU instead: it is resolved through the SKU map (pull_stock) at the
// start of each cycle, and one the map does not hold is recorded with its reason
// (`{prefix}watched_sku_sync`, a metric, `status`) and has no lots read.
#include <cstdint>
#include <vector>
#include <chrono>
#include <optional>

#include "fulfillsync/api/provider.hpp"
#include "fulfillsync/config/config.hpp"
#include "fulfillsync/daemon/job/failure_backoff.hpp"
#include "fulfillsync/daemon/job/job.hpp"
#include "fulfillsync/merchant/pulled_records.hpp"
#include "pull/pull_context.hpp"

namespace fulfillsync::daemon {

// Where pull_lots saves the watched SKUs the SKU map did not resolve at its last cycle (for
// `status`): comma-separated, empty when none.
inline constexpr const char* kUnresolvedWatchedSkus = "pull_lots:unresolved_skus";

class PullLotsJob final : public Job {
 public:
  // `spread`: space the reads across the interval (the daemon); without, read them all (`once`).
  PullLotsJob(PullContext context, config::LotsConfig config, bool spread);
  std::string_view name() const override { return "pull_lots"; }
  bool pulls() const override { return true; }
  bool paces_itself() const override { return true; }
  boost::asio::awaitable<JobRun> run() override;
  int backlog() override;
  bool paused() const override { return backoff_.paused(); }
  std::optional<std::chrono::system_clock::time_point> data_as_of() const override { return last_cycle_started_; }

 private:
  std::vector<std::int64_t> watched();
  std::optional<std::vector<merchant::LotRecord>> lots_in(std::int64_t inventory_id,
                                                          const api::Answer<api::LotLevels>& levels);

  PullContext context_;
  api::Provider provider_;
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
