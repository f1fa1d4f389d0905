#pragma once
// Runs the sync jobs: each on its own loop (run, then wait for its interval with a little jitter
// unless it has more to do), or all in turn until none has work left (`fulfillsyncd once`). Counts
// runs, durations, failures and last successes per job. A stop lets running runs finish; `in_flight`
// counts them so the service's graceful stop can wait. A job resting out its interval can be woken
// to run now (the merchant database said its tables changed).
//
// Idle jobs: a pull whose run asked the provider and found nothing new (JobRun::quiet) rests twice
// as long after each such run, up to kLongestQuietRest times its interval (pull_shipments' 2m grows
// to 16m, pull_returns' 5m to 40m), so a shop with nothing to do costs a few calls an hour. Another
// job whose run settled nothing rests at most kLongestQuietPushRest times its interval (a push's
// 250ms becomes 500ms: idle polls cost half, and the first change after a quiet spell waits at most
// one such rest). A run that settles anything (an order created or cancelled, a return created,
// shipments written, tracking marked) brings every job back to its interval at once: a rest already
// longer is cut to end one interval after it began. A quiet pull's writes do not (they are what it
// had already: the open returns' statuses, the overlap's orders). Tracking is then read as often as
// configured while there is activity. A run that holds work back until a moment
// (JobRun::next_run_within: a batch of marks filling up) has its next run by then, however long its
// rest would be. The rest of a pull it paces is exported (fulfillsync_pull_rest_seconds): an idle
// pull's lag grows with it.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "fulfillsync/api/answer_log.hpp"
#include "fulfillsync/common/asio.hpp"
#include "fulfillsync/config/config.hpp"
#include "fulfillsync/daemon/job/job.hpp"
#include "fulfillsync/daemon/job/sync_metrics.hpp"

namespace fulfillsync::daemon {

class Scheduler {
 public:
  Scheduler(boost::asio::any_io_executor executor, SyncMetrics& metrics, const bool& stopping, int& in_flight);

  void add(std::unique_ptr<Job> job, config::Duration interval);
  const std::vector<std::unique_ptr<Job>>& jobs() const { return jobs_; }

  // What a job has done since the start.
  struct Figures {
    long runs = 0, failed_runs = 0, settled = 0;
    long failed_in_a_row = 0;
    double last_run_seconds = 0;
    std::optional<std::chrono::system_clock::time_point> last_success{};
    // The last run that threw (a store that cannot be read or written), and what it threw.
    std::optional<std::chrono::system_clock::time_point> error_at{};
    std::string error{};
  };
  Figures figures(const Job& job) const;
  long settled(const Job& job) const { return figures(job).settled; }

  // Where the provider's answers to the job named `job` are noted (ApiClient::for_caller), made on
  // first use so that the job's client can be made before the job.
  api::AnswerLog& answer_log(std::string_view job);
  const api::AnswerLog* find_answer_log(std::string_view job) const;

  // Starts every job's loop.
  void start();

  // Runs the named jobs now rather than at the end of their interval. A job running now runs once
  // more when it ends (its read may have come before the change); wakes meanwhile make one run. A job
  // waiting out a back-off (its last run failed, throttled, paused) is left to wait: a change does
  // not make a failing job's next try any likelier to succeed, and must not turn its back-off into
  // a tight loop.
  void wake(std::span<const std::string_view> jobs);

  // The most a quiet pull's rest grows, as a multiple of its interval; and any other job's.
  static constexpr int kLongestQuietRest = 8;
  static constexpr int kLongestQuietPushRest = 2;
  // The rest after the job's last run, before jitter: its interval, or longer while its pulls are quiet.
  std::chrono::milliseconds rest_after_quiet_runs(const Job& job) const;

  enum class Idle {
    done,     // nothing left to do, and every job's last run ended without error
    paused,   // a job is paused until an operator acts (credentials or certificate refused)
    failing,  // a job's runs failed `failed_runs_limit` times in a row: failing_job() names it
    stopped,  // a stop signal
  };
  // Runs the jobs in turn until none has anything left to do, one is paused or keeps failing, or a
  // stop. A job whose last run failed is not done: it runs again after its back-off.
  boost::asio::awaitable<Idle> run_until_idle(int failed_runs_limit);
  // After Idle::failing: the job, and the error of its last run when it threw.
  const std::string& failing_job() const { return failing_job_; }
  const std::string& failing_error() const { return failing_error_; }

 private:
  struct Slot {
    Job* job;
    config::Duration interval;
    std::unique_ptr<boost::asio::steady_timer> rest;  // the wait for the interval or back-off
    Figures figures{};
    bool running = false;  // a run is under way
    bool resting = false;  // waiting out the interval after a run that went well: wake() cuts it short
    bool woken = false;    // woken while running: run once more
    int quiet_runs = 0;    // runs in a row that found nothing new (pulls) or settled nothing (others)
    std::chrono::steady_clock::time_point rest_began{};
  };
  std::chrono::milliseconds quiet_rest(const Slot& slot) const;
  // fulfillsync_pull_rest_seconds of a pull the scheduler paces.
  void export_rest(const Slot& slot);
  // Something was settled: every quiet job back to its interval.
  void end_quiet_rests();
  boost::asio::awaitable<void> loop(Slot& slot);
  // `error`: set to what the run threw, if it did.
  boost::asio::awaitable<JobRun> run_once(Slot& slot, std::string* error = nullptr);
  boost::asio::awaitable<void> sleep(std::chrono::milliseconds duration);
  static boost::asio::awaitable<void> rest(Slot& slot, std::chrono::milliseconds duration);

  boost::asio::any_io_executor executor_;
  SyncMetrics& metrics_;
  const bool& stopping_;
  int& in_flight_;
  std::vector<std::unique_ptr<Job>> jobs_;
  std::vector<Slot> slots_;
  std::mt19937 random_{std::random_device{}()};
  std::string failing_job_, failing_error_;
  std::map<std::string, api::AnswerLog, std::less<>> answer_logs_;
};

}  // namespace fulfillsync::daemon
