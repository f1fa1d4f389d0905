#pragma once
// A sync job as the scheduler sees it: one run does a bounded amount of work and says whether more
// is waiting. Failures inside a run are values (logged, counted, retried); a run throws only for a
// store that cannot be read or written, which the scheduler logs and counts before the next run.
#include <chrono>
#include <optional>
#include <string_view>

#include "fulfillsync/common/asio.hpp"

namespace fulfillsync::daemon {

struct JobRun {
  int settled = 0;    // items that reached a final or waiting state
  bool more = false;  // run again without waiting for the interval
  bool ok = true;     // false: the run met an error (logged and counted)
  // Wait at least this long before the next run (throttled, provider unreachable, paused).
  std::chrono::milliseconds back_off{0};
  // Work held back until a moment (a batch of marks left to fill up): the next run comes no later
  // than this, however long the job's rest would otherwise be.
  std::optional<std::chrono::milliseconds> next_run_within{};
  // A pull that asked the provider and found nothing new: while its runs stay quiet and nothing is
  // pushed, the scheduler lets its rest grow (Scheduler, "Idle pulls").
  bool quiet = false;
};

class Job {
 public:
  virtual ~Job() = default;
  virtual std::string_view name() const = 0;
  virtual boost::asio::awaitable<JobRun> run() = 0;
  // Items still to send or to look up; rejected items are not work.
  virtual int backlog() = 0;
  // Paused because the provider refused the credentials, or its TLS certificate was refused: the
  // operator must act.
  virtual bool paused() const = 0;
  // A pull job: the provider's data it last committed in full is as of this moment (the start of
  // that window, pass or cycle); its lag is now minus this. Nothing for push jobs, or before the first.
  virtual std::optional<std::chrono::system_clock::time_point> data_as_of() const { return std::nullopt; }
  // A pull job: it has a lag (fulfillsync_pull_lag_seconds) from the start.
  virtual bool pulls() const { return false; }
  // A pull job that waits out its own interval between cycles or passes (JobRun::back_off) and
  // exports it (fulfillsync_pull_interval_seconds); the scheduler only wakes it. The rest of another
  // pull is the scheduler's (fulfillsync_pull_rest_seconds).
  virtual bool paces_itself() const { return false; }
};

}  // namespace fulfillsync::daemon
