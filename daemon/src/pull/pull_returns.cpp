#include "pull/pull_returns.hpp"

#include <map>
#include <span>
#include <string>

#include <spdlog/spdlog.h>

#include "fulfillsync/daemon/job/failpoints.hpp"
#include "fulfillsync/daemon/mapping/pulled_mapping.hpp"
#include "store/return_progress.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;

PullReturnsJob::PullReturnsJob(PullContext context, config::PullJobConfig config)
    : context_(context), provider_(context.client), config_(config), backoff_("pull_returns", context.metrics) {}

asio::awaitable<JobRun> PullReturnsJob::run() {
  try {
    co_return co_await poll();
  } catch (...) {
    pass_failed_ = true;  // a store that cannot be written: the pass is not complete
    throw;
  }
}

asio::awaitable<JobRun> PullReturnsJob::poll() {
  JobRun run;
  if (backoff_.holds(run)) co_return run;
  const auto pass_started = std::chrono::system_clock::now();
  const std::vector<std::int64_t> open = ReturnProgress(context_.checkpoint).open_returns();
  const auto chunk = static_cast<std::size_t>(config_.page_size);
  bool asked = false;
  bool progressed = false;  // a return's status moved since the last pass
  std::map<std::int64_t, std::string> seen_now;
  for (std::size_t first = 0; first < open.size(); first += chunk) {
    if (context_.stopping) co_return run;
    const auto ids = std::span(open).subspan(first, std::min(chunk, open.size() - first));
    api::ReturnPages pages = provider_.list_returns(ids, config_.page_size);
    while (const std::optional<api::Answer<api::ReturnList>> list = co_await pages.next()) {
      asked = true;
      if (!*list) {
        spdlog::warn("pull_returns: reading {} open returns: {}; trying again later", open.size(), list->why());
        run.ok = false;
        run.back_off = backoff_.note_failure(list->outcome);
        pass_failed_ = true;
        co_return run;
      }
      std::vector<merchant::ReturnStatusRecord> records;
      for (const auto& item : (*list)->items) {
        if (auto record = return_status_of(item)) records.push_back(std::move(*record));
      }
      context_.merchant.write_return_statuses(records);
      failpoint("pull_returns.after_merchant_commit");
      ReturnProgress(context_.checkpoint).save(records);
      context_.metrics.count_items(name(), "written", static_cast<double>(records.size()));
      run.settled += static_cast<int>(records.size());
      for (const auto& record : records) {
        std::string seen = record.status + " " + record.as_of;
        const auto before = last_seen_.find(record.remote_id);
        progressed = progressed || before == last_seen_.end() || before->second != seen;
        seen_now.emplace(record.remote_id, std::move(seen));
      }
    }
  }
  // With no open return nothing was asked: this pass says nothing of whether the provider answers.
  if (asked) backoff_.note_success();
  run.quiet = asked && !progressed;
  last_seen_ = std::move(seen_now);
  pass_failed_ = false;
  data_as_of_ = pass_started;
  co_return run;
}

}  // namespace fulfillsync::daemon
