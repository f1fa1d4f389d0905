#pragma once
// pull_shipments walks every order the provider changed since the last committed window (less an
// overlap), page by page (GET /order?LastUpdateStartDate=), writing order statuses, shipments, items
// and tracking; the window's end is saved only once all of it is committed (a crash repeats work,
// never loses it).
#include <cstdint>
#include <utility>
#include <vector>
#include <chrono>
#include <optional>

#include "fulfillsync/api/provider.hpp"
#include "fulfillsync/config/config.hpp"
#include "fulfillsync/daemon/job/failure_backoff.hpp"
#include "fulfillsync/daemon/job/job.hpp"
#include "pull/pull_context.hpp"

namespace fulfillsync::daemon {

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
  api::Provider provider_;
  config::PullJobConfig config_;
  FailureBackoff backoff_;
  bool window_failed_ = false;
  std::optional<std::chrono::system_clock::time_point> data_as_of_;
};

}  // namespace fulfillsync::daemon
