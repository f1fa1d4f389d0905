#include "fulfillsync/daemon/job/failure_backoff.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "fulfillsync/common/doubling.hpp"
#include "fulfillsync/config/duration.hpp"

namespace fulfillsync::daemon {
using namespace std::chrono_literals;
using api::OutcomeKind;

namespace {

constexpr Doubling kPause{1min, 15min};
constexpr Doubling kBackOff{1s, 30s};

}  // namespace

FailureBackoff::FailureBackoff(std::string job, SyncMetrics& metrics) : job_(std::move(job)), metrics_(metrics) {}

std::optional<std::chrono::milliseconds> FailureBackoff::pause_left() const {
  if (!pause_reason_) return std::nullopt;
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(paused_until_ - std::chrono::steady_clock::now());
  if (left <= 0ms) return std::nullopt;
  return left;
}

bool FailureBackoff::holds(JobRun& run) const {
  const auto left = pause_left();
  if (left) run.back_off = *left;
  return left.has_value();
}

std::chrono::milliseconds FailureBackoff::pause(PauseReason reason, const api::Outcome& outcome) {
  pause_ = kPause.next(pause_);
  if (pause_reason_ != reason) {
    if (reason == PauseReason::credentials) {
      spdlog::critical("{}: paused for {}: the provider refused the credentials ({}); check the token or "
                       "run 'fulfillsyncd auth login'",
                       job_, config::format_duration(pause_), outcome.detail);
    } else {
      spdlog::error("{}: paused for {}: {}", job_, config::format_duration(pause_), outcome.detail);
    }
  }
  pause_reason_ = reason;
  paused_until_ = std::chrono::steady_clock::now() + pause_;
  if (reason == PauseReason::credentials) {
    metrics_.set_paused(job_, true);
  } else {
    metrics_.count_certificate_refusal(job_);
  }
  return pause_;
}

void FailureBackoff::note_reachable(bool reachable, const std::string& detail) {
  if (!metrics_.set_provider_reachable(reachable)) return;
  if (reachable) {
    spdlog::info("{}: the provider answers again", job_);
  } else {
    spdlog::error("{}: the provider cannot be reached ({}); the jobs keep trying with growing pauses", job_, detail);
  }
}

std::chrono::milliseconds FailureBackoff::note_failure(const api::Outcome& outcome) {
  if (outcome.certificate_refused) return pause(PauseReason::certificate, outcome);
  switch (outcome.kind) {
    case OutcomeKind::throttled:
      // Not a failure: the budget already waits; this only spaces the job's next run.
      note_reachable(true, "");
      return std::max<std::chrono::milliseconds>(outcome.retry_after, 1s);
    case OutcomeKind::unauthorized:
    case OutcomeKind::forbidden:
      if (outcome.status != 0) note_reachable(true, "");  // else no token was at hand to send
      return pause(PauseReason::credentials, outcome);
    case OutcomeKind::not_sent:
    case OutcomeKind::ambiguous:
      note_reachable(false, outcome.detail);
      [[fallthrough]];
    default:
      back_off_ = kBackOff.next(back_off_);
      return back_off_;
  }
}

void FailureBackoff::note_success() {
  back_off_ = 0ms;
  note_reachable(true, "");
  if (pause_reason_) {
    spdlog::info("{}: the provider accepts {} again; resuming", job_,
                 pause_reason_ == PauseReason::credentials ? "the credentials" : "its certificate");
    if (pause_reason_ == PauseReason::credentials) metrics_.set_paused(job_, false);
    pause_reason_.reset();
    pause_ = 0ms;
  }
}

}  // namespace fulfillsync::daemon
