#pragma once
// How a job meets exchanges that failed for a reason that is not about one item: a 429 spaces its
// next run; refused credentials (401/403) pause it, 1 minute doubling to 15, with a critical log
// and the `fulfillsync_job_paused` gauge; a provider certificate that fails TLS verification pauses
// it the same way, logged at error with the fix and counted in
// `fulfillsync_tls_certificate_refusals_total` (a configuration problem: retrying soon would not
// mend it); anything else (no connection, no clear answer, a 2xx whose body cannot be read) backs it
// off, 1 second doubling to 30. No connection or no answer (after the client's own retries) also
// sets `fulfillsync_provider_reachable` to 0, logged at error once; the first success resumes the
// job and sets it back to 1.
#include <chrono>
#include <optional>
#include <string>

#include "fulfillsync/api/outcome.hpp"
#include "fulfillsync/daemon/job/job.hpp"
#include "fulfillsync/daemon/job/sync_metrics.hpp"

namespace fulfillsync::daemon {

class FailureBackoff {
 public:
  FailureBackoff(std::string job, SyncMetrics& metrics);

  // Returns how long the job waits before its next run.
  std::chrono::milliseconds note_failure(const api::Outcome& outcome);
  void note_success();

  // Paused until an operator acts: credentials or the provider's certificate refused.
  bool paused() const { return pause_reason_.has_value(); }
  // At the start of a run: true while paused, with the rest of the pause as the run's back-off (a
  // pause that ran out lets one run try).
  bool holds(JobRun& run) const;

 private:
  enum class PauseReason { credentials, certificate };
  std::chrono::milliseconds pause(PauseReason reason, const api::Outcome& outcome);
  std::optional<std::chrono::milliseconds> pause_left() const;
  void note_reachable(bool reachable, const std::string& detail);

  std::string job_;
  SyncMetrics& metrics_;
  std::optional<PauseReason> pause_reason_;
  std::chrono::steady_clock::time_point paused_until_;
  std::chrono::milliseconds pause_{0};
  std::chrono::milliseconds back_off_{0};
};

}  // namespace fulfillsync::daemon
