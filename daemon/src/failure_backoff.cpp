#include "fulfillsync/daemon/failure_backoff.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "fulfillsync/config/duration.hpp"

namespace fulfillsync::daemon {
using namespace std::chrono_literals;
using api::OutcomeKind;

namespace {

constexpr std::chrono::milliseconds kFirstPause = 1min;
constexpr std::chrono::milliseconds kLongestPause = 15min;
constexpr std::chrono::milliseconds kFirstBackOff = 1s;
constexpr std::chrono::milliseconds kLongestBackOff = 30s;

std::chrono::milliseconds doubled(std::chrono::milliseconds current, std::chrono::milliseconds first,
                                  std::chrono::milliseconds longest) {
  return current == 0ms ? first : std::min(current * 2, longest);
}

}  // namespace

FailureBackoff::FailureBackoff(std::string job, SyncMetrics& metrics) : job_(std::move(job)), metrics_(metrics) {}

std::optional<std::chrono::milliseconds> FailureBackoff::pause_left() const {
  if (!paused_until_) return std::nullopt;
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(*paused_until_ - std::chrono::steady_clock::now());
  if (left <= 0ms) return std::nullopt;
  return left;
}

bool FailureBackoff::holds(JobRun& run) const {
  const auto left = pause_left();
  if (left) run.back_off = *left;
  return left.has_value();
}

std::chrono::milliseconds FailureBackoff::note_failure(const api::Outcome& outcome) {
  switch (outcome.kind) {
    case OutcomeKind::throttled:
      // Not a failure: the budget already waits; this only spaces the job's next run.
      return std::max<std::chrono::milliseconds>(outcome.retry_after, 1s);
    case OutcomeKind::unauthorized:
    case OutcomeKind::forbidden:
      pause_ = doubled(pause_, kFirstPause, kLongestPause);
      if (!paused_until_) {
        spdlog::critical("{}: paused for {}: the provider refused the credentials ({}); check the token or "
                         "run 'fulfillsyncd auth login'",
                         job_, config::format_duration(pause_), outcome.detail);
      }
      paused_until_ = std::chrono::steady_clock::now() + pause_;
      metrics_.set_paused(job_, true);
      return pause_;
    default:
      back_off_ = doubled(back_off_, kFirstBackOff, kLongestBackOff);
      return back_off_;
  }
}

void FailureBackoff::note_success() {
  back_off_ = 0ms;
  if (paused_until_) {
    spdlog::info("{}: the provider accepts the credentials again; resuming", job_);
    paused_until_.reset();
    pause_ = 0ms;
    metrics_.set_paused(job_, false);
  }
}

}  // namespace fulfillsync::daemon
