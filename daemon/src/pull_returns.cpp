#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/api/answer.hpp"
#include "fulfillsync/api/pager.hpp"
#include "fulfillsync/daemon/failpoints.hpp"
#include "fulfillsync/daemon/pull_jobs.hpp"
#include "fulfillsync/daemon/pulled_mapping.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;

namespace {

// The provider's ids of the returns the daemon created whose last known status is not final.
std::vector<std::int64_t> open_returns(CheckpointStore& store) {
  SQLite::Statement& query = store.prepared(
      "SELECT o.remote_id FROM outbound_ledger AS o LEFT JOIN return_progress AS p ON p.remote_id = o.remote_id "
      "WHERE o.kind = 'return_create' AND o.state = 'created' AND o.remote_id IS NOT NULL "
      "AND (p.status IS NULL OR p.status NOT IN ('Completed', 'Cancelled')) ORDER BY o.remote_id");
  std::vector<std::int64_t> ids;
  while (query.executeStep()) ids.push_back(query.getColumn(0).getInt64());
  return ids;
}

// After the merchant database holds them: the statuses decide which returns are polled next time.
void save_progress(CheckpointStore& store, const std::vector<merchant::ReturnStatusRecord>& records) {
  SQLite::Transaction transaction(store.database(), SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement& upsert = store.prepared(
      "INSERT INTO return_progress (remote_id, status, as_of) VALUES (?1, ?2, ?3) ON CONFLICT (remote_id) "
      "DO UPDATE SET status = excluded.status, as_of = excluded.as_of WHERE excluded.as_of >= as_of");
  for (const auto& record : records) {
    upsert.reset();
    upsert.bind(1, static_cast<int64_t>(record.remote_id));
    upsert.bind(2, record.status);
    upsert.bind(3, record.as_of);
    upsert.exec();
  }
  transaction.commit();
}

}  // namespace

PullReturnsJob::PullReturnsJob(PullContext context, config::PullJobConfig config)
    : context_(context), config_(config), backoff_("pull_returns", context.metrics) {}

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
  const std::vector<std::int64_t> open = open_returns(context_.checkpoint);
  const auto chunk = static_cast<std::size_t>(config_.page_size);
  bool asked = false;
  for (std::size_t first = 0; first < open.size(); first += chunk) {
    if (context_.stopping) co_return run;
    std::string ids;
    for (std::size_t i = first; i < std::min(first + chunk, open.size()); ++i) {
      ids += fmt::format("{}{}", i == first ? "" : ",", open[i]);
    }
    api::CursorPager pager(context_.client,
                           api::ApiRequest{.method = "GET",
                                           .route = "/return",
                                           .path = "/return",
                                           .query = {{"Ids", ids}, {"Limit", std::to_string(config_.page_size)}},
                                           .priority = api::Priority::pull,
                                           .with_channel = true});
    while (const std::optional<api::Outcome> page = co_await pager.next()) {
      asked = true;
      std::string why;
      const auto list = api::answer_of<api::ReturnList>(*page, context_.version, why);
      if (!list) {
        spdlog::warn("pull_returns: reading {} open returns: {}; trying again later", open.size(), why);
        run.ok = false;
        run.back_off = backoff_.note_failure(*page);
        pass_failed_ = true;
        co_return run;
      }
      std::vector<merchant::ReturnStatusRecord> records;
      for (const auto& item : list->items) {
        if (auto record = return_status_of(item)) records.push_back(std::move(*record));
      }
      context_.merchant.write_return_statuses(records);
      failpoint("pull_returns.after_merchant_commit");
      save_progress(context_.checkpoint, records);
      context_.metrics.count_items(name(), "written", static_cast<double>(records.size()));
      run.settled += static_cast<int>(records.size());
      pager.follow(list->next);
    }
  }
  // With no open return nothing was asked: this pass says nothing of whether the provider answers.
  if (asked) backoff_.note_success();
  pass_failed_ = false;
  data_as_of_ = pass_started;
  co_return run;
}

}  // namespace fulfillsync::daemon
