#pragma once
// pull_returns polls the returns the daemon created until they are completed or cancelled.
#include <chrono>
#include <map>
#include <string>
#include <optional>

#include "fulfillsync/api/provider.hpp"
#include "fulfillsync/config/config.hpp"
#include "fulfillsync/daemon/job/failure_backoff.hpp"
#include "fulfillsync/daemon/job/job.hpp"
#include "pull/pull_context.hpp"

namespace fulfillsync::daemon {

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
  api::Provider provider_;
  config::PullJobConfig config_;
  FailureBackoff backoff_;
  bool pass_failed_ = false;
  // Each open return's status and its time at the last pass: a pass that moves none is quiet.
  std::map<std::int64_t, std::string> last_seen_;
  std::optional<std::chrono::system_clock::time_point> data_as_of_;
};

}  // namespace fulfillsync::daemon
