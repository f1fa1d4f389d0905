#include "service/scheduler.hpp"

#include <algorithm>

#include <SQLiteCpp/Exception.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/merchant/database_error.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

// Where a run that threw failed, for fulfillsync_job_run_errors_total: the merchant database's
// errors are its own type; the checkpoint store's are SQLiteCpp's.
SyncMetrics::RunError where_it_failed(const std::exception& error) {
  if (dynamic_cast<const merchant::MerchantDatabaseError*>(&error)) return SyncMetrics::RunError::merchant_database;
  if (dynamic_cast<const SQLite::Exception*>(&error)) return SyncMetrics::RunError::checkpoint_store;
  return SyncMetrics::RunError::other;
}

// Between two passes of `once` that found work waiting on something else (an unclear send, a back-off,
// a job's interval).
constexpr auto kOnceRetryWait = 200ms;
// After a run that threw (a store locked or unreadable): the next try.
constexpr auto kAfterErrorWait = 5s;

}  // namespace

Scheduler::Scheduler(asio::any_io_executor executor, SyncMetrics& metrics, const bool& stopping, int& in_flight)
    : executor_(std::move(executor)), metrics_(metrics), stopping_(stopping), in_flight_(in_flight) {}

void Scheduler::add(std::unique_ptr<Job> job, config::Duration interval) {
  metrics_.set_paused(job->name(), false);
  jobs_.push_back(std::move(job));
  slots_.push_back(Slot{jobs_.back().get(), interval, std::make_unique<asio::steady_timer>(executor_)});
  export_rest(slots_.back());
}

void Scheduler::export_rest(const Slot& slot) {
  if (slot.job->pulls() && !slot.job->paces_itself()) metrics_.set_pull_rest(slot.job->name(), quiet_rest(slot));
}

Scheduler::Figures Scheduler::figures(const Job& job) const {
  for (const auto& slot : slots_) {
    if (slot.job == &job) return slot.figures;
  }
  return {};
}

api::AnswerLog& Scheduler::answer_log(std::string_view job) {
  const auto it = answer_logs_.find(job);
  return it != answer_logs_.end() ? it->second : answer_logs_[std::string(job)];
}

const api::AnswerLog* Scheduler::find_answer_log(std::string_view job) const {
  const auto it = answer_logs_.find(job);
  return it == answer_logs_.end() ? nullptr : &it->second;
}

void Scheduler::start() {
  for (auto& slot : slots_) asio::co_spawn(executor_, loop(slot), asio::detached);
}

void Scheduler::wake(std::span<const std::string_view> jobs) {
  for (Slot& slot : slots_) {
    if (std::find(jobs.begin(), jobs.end(), slot.job->name()) == jobs.end()) continue;
    if (slot.running) {
      slot.woken = true;
    } else if (slot.resting) {
      slot.resting = false;
      slot.rest->cancel();
    }
  }
}

asio::awaitable<void> Scheduler::rest(Slot& slot, std::chrono::milliseconds duration) {
  slot.rest_began = std::chrono::steady_clock::now();
  slot.rest->expires_after(duration);
  for (;;) {
    boost::system::error_code ignored;  // cancelled: woken, or the rest shortened
    co_await slot.rest->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    // Woken (wake() ended the rest) or due; else end_quiet_rests() moved the end earlier: wait for it.
    if (!slot.resting || std::chrono::steady_clock::now() >= slot.rest->expiry()) break;
  }
  slot.resting = false;
}

std::chrono::milliseconds Scheduler::quiet_rest(const Slot& slot) const {
  const auto interval = std::chrono::duration_cast<std::chrono::milliseconds>(slot.interval);
  const int longest = slot.job->pulls() ? kLongestQuietRest : kLongestQuietPushRest;
  // Doubled per quiet run, capped (the cap on the shift keeps 1 << n defined however long it stays quiet).
  return interval * std::min(1 << std::min(slot.quiet_runs, 30), longest);
}

std::chrono::milliseconds Scheduler::rest_after_quiet_runs(const Job& job) const {
  for (const auto& slot : slots_) {
    if (slot.job == &job) return quiet_rest(slot);
  }
  return 0ms;
}

void Scheduler::end_quiet_rests() {
  for (Slot& slot : slots_) {
    if (slot.quiet_runs == 0) continue;
    slot.quiet_runs = 0;
    export_rest(slot);
    const auto end = slot.rest_began + slot.interval;
    if (slot.resting && end < slot.rest->expiry()) {
      spdlog::debug("{}: something was settled; its next run is one interval after its last", slot.job->name());
      slot.rest->expires_at(end);  // cancels the wait, which waits again for the new end
    }
  }
}

asio::awaitable<void> Scheduler::sleep(std::chrono::milliseconds duration) {
  asio::steady_timer timer(executor_);
  timer.expires_after(duration);
  boost::system::error_code ignored;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
}

asio::awaitable<JobRun> Scheduler::run_once(Slot& slot, std::string* error) {
  ++in_flight_;
  const auto started = std::chrono::steady_clock::now();
  JobRun run;
  try {
    run = co_await slot.job->run();
  } catch (const std::exception& e) {
    // A store that cannot be read or written now (locked past its busy timeout, a full disk): the
    // ledger and the saved cursors are as they were before the run, so trying later is safe.
    spdlog::error("{}: {}; trying again in {}s", slot.job->name(), e.what(),
                  std::chrono::duration_cast<std::chrono::seconds>(kAfterErrorWait).count());
    run = JobRun{.ok = false, .back_off = kAfterErrorWait};
    metrics_.count_run_error(slot.job->name(), where_it_failed(e));
    if (error) *error = e.what();
    slot.figures.error_at = std::chrono::system_clock::now();
    slot.figures.error = e.what();
  }
  --in_flight_;
  const auto took = std::chrono::steady_clock::now() - started;
  Figures& figures = slot.figures;
  figures.settled += run.settled;
  ++figures.runs;
  figures.failed_runs += run.ok ? 0 : 1;
  if (run.ok && figures.failed_in_a_row > 0) {
    // The error lines said it failed; without this one, a log read later cannot tell when it stopped.
    spdlog::info("{}: working again after {} failed run{}", slot.job->name(), figures.failed_in_a_row,
                 figures.failed_in_a_row == 1 ? "" : "s");
  }
  figures.failed_in_a_row = run.ok ? 0 : figures.failed_in_a_row + 1;
  figures.last_run_seconds = std::chrono::duration<double>(took).count();
  if (run.ok) figures.last_success = std::chrono::system_clock::now();
  metrics_.observe_run(slot.job->name(), run.ok, took);
  co_return run;
}

asio::awaitable<void> Scheduler::loop(Slot& slot) {
  // Jitter keeps the jobs from running in lockstep and spreads their requests over the interval.
  std::uniform_real_distribution<double> jitter(0.9, 1.1);
  while (!stopping_) {
    slot.running = true;
    slot.woken = false;
    const JobRun run = co_await run_once(slot);
    slot.running = false;
    if (stopping_) break;
    const bool quiet = slot.job->pulls() ? run.quiet : run.settled == 0 && !run.more;
    slot.quiet_runs = quiet && run.ok ? slot.quiet_runs + 1 : 0;
    export_rest(slot);
    // A quiet pull's items are the same ones written again (the open returns' statuses, the overlap's
    // orders): nothing happened that brings the others back to their intervals.
    if (run.settled > 0 && !quiet) end_quiet_rests();
    if (run.back_off > 0ms) {
      co_await rest(slot, run.back_off);
    } else if (!run.more && !(slot.woken && run.ok)) {
      slot.resting = run.ok;  // a failed run's interval is its back-off
      const auto interval = quiet_rest(slot);
      if (slot.quiet_runs > 0) {
        spdlog::debug("{}: nothing new; next run in {}s", slot.job->name(),
                      std::chrono::duration_cast<std::chrono::seconds>(interval).count());
      }
      auto jittered = std::chrono::milliseconds(static_cast<std::int64_t>(interval.count() * jitter(random_)));
      if (run.next_run_within) jittered = std::min(jittered, *run.next_run_within);
      co_await rest(slot, jittered);
    } else {
      // A run that awaited nothing (an intake over a long backlog, say) would otherwise keep the loop
      // to itself: other jobs, answers in flight, signals and the watchdog wait for their turn.
      co_await asio::post(executor_, asio::use_awaitable);
    }
  }
}

asio::awaitable<Scheduler::Idle> Scheduler::run_until_idle(int failed_runs_limit) {
  // Each job runs at once, then again while it has more to do or once its interval has passed, as
  // in the daemon: the pull jobs do not walk their windows on every pass of the pushes. The first
  // time all is idle, one more pass runs each job that began before another job last settled
  // something (so that the pulls see what the pushes did last, and the marks what the pulls wrote).
  using Clock = std::chrono::steady_clock;
  std::vector<Clock::time_point> due(slots_.size(), Clock::now());
  std::vector<bool> wants_more(slots_.size(), false);
  std::vector<int> failed_in_a_row(slots_.size(), 0);
  // When each job's last run began, and when its last run that settled anything ended.
  std::vector<Clock::time_point> started(slots_.size()), settled(slots_.size());
  const auto stale = [&](std::size_t i) {
    for (std::size_t j = 0; j < slots_.size(); ++j) {
      if (j != i && settled[j] > started[i]) return true;
    }
    return false;
  };
  bool settling = false, settled_once = false;
  for (;;) {
    bool more = false;
    std::chrono::milliseconds back_off = 0ms;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (stopping_) co_return Idle::stopped;
      Slot& slot = slots_[i];
      if (!wants_more[i] && Clock::now() < due[i] && !(settling && stale(i))) continue;
      started[i] = Clock::now();
      std::string error;
      const JobRun run = co_await run_once(slot, &error);
      if (run.settled > 0) settled[i] = Clock::now();
      if (slot.job->paused()) co_return Idle::paused;
      failed_in_a_row[i] = run.ok ? 0 : failed_in_a_row[i] + 1;
      if (failed_in_a_row[i] >= failed_runs_limit) {
        failing_job_ = std::string(slot.job->name());
        failing_error_ = std::move(error);
        co_return Idle::failing;
      }
      wants_more[i] = run.more && run.back_off == 0ms;
      const auto until_next = std::min(slot.interval, run.next_run_within.value_or(slot.interval));
      due[i] = Clock::now() + (run.back_off > 0ms ? run.back_off : until_next);
      more = more || run.more;
      back_off = std::max(back_off, run.back_off);
    }
    if (settling) {
      settling = false;
      settled_once = true;
    }
    if (stopping_) co_return Idle::stopped;
    if (more && back_off == 0ms) {
      co_await asio::post(executor_, asio::use_awaitable);  // let signals through
      continue;
    }
    bool idle = !more;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      idle = idle && failed_in_a_row[i] == 0 && slots_[i].job->backlog() == 0;
    }
    if (idle) {
      bool any_stale = false;
      for (std::size_t i = 0; i < slots_.size(); ++i) any_stale = any_stale || stale(i);
      if (settled_once || !any_stale) co_return Idle::done;
      settling = true;
      continue;
    }
    co_await sleep(std::chrono::duration_cast<std::chrono::milliseconds>(kOnceRetryWait));
  }
}

}  // namespace fulfillsync::daemon
