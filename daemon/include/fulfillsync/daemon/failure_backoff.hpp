#pragma once
// How a job meets exchanges that failed for a reason that is not about one item: a 429 spaces its
// next run; refused credentials (401/403) pause it, 1 minute doubling to 15, with a critical log
// and the `fulfillsync_job_paused` gauge; anything else (no connection, no clear answer, a 2xx whose
// body cannot be read) backs it off, 1 second doubling to 30. The first success resumes the job.
#include <chrono>
#include <optional>
#include <string>

#include "fulfillsync/api/outcome.hpp"
#include "fulfillsync/daemon/job.hpp"
#include "fulfillsync/daemon/sync_metrics.hpp"

namespace fulfillsync::daemon {

class FailureBackoff {
 public:
  FailureBackoff(std::string job, SyncMetrics& metrics);

  // Returns how long the job waits before its next run.
  std::chrono::milliseconds note_failure(const api::Outcome& outcome);
  void note_success();

  bool paused() const { return paused_until_.has_value(); }
  // At the start of a run: true while paused, with the rest of the pause as the run's back-off (a
  // pause that ran out lets one run try).
  bool holds(JobRun& run) const;

 private:
  std::optional<std::chrono::milliseconds> pause_left() const;

  std::string job_;
  SyncMetrics& metrics_;
  std::optional<std::chrono::steady_clock::time_point> paused_until_;
  std::chrono::milliseconds pause_{0};
  std::chrono::milliseconds back_off_{0};
};

}  // namespace fulfillsync::daemon
