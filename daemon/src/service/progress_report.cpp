#include "service/progress_report.hpp"

#include <cmath>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/daemon/store/job_stats.hpp"

namespace fulfillsync::daemon {

std::string rough_duration(double seconds) {
  const auto total = static_cast<long long>(std::ceil(std::max(seconds, 0.0)));
  if (total >= 3600) return fmt::format("{}h{:02}m", total / 3600, total % 3600 / 60);
  if (total >= 60) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}s", total);
}

ProgressReport::ProgressReport(const Scheduler& scheduler, CheckpointStore& store, OutboundLedger& ledger,
                               TrackingMarkLedger& marks, SyncMetrics& metrics, int requests_per_minute)
    : scheduler_(scheduler),
      store_(store),
      ledger_(ledger),
      marks_(marks),
      metrics_(metrics),
      budget_per_second_(requests_per_minute / 60.0) {
  std::map<std::string, JobStats, std::less<>> saved;
  for (JobStats& job : load_job_stats(store_)) saved.emplace(job.job, std::move(job));
  const auto instant = [](const std::optional<std::string>& text) {
    return text ? timestamps::parse_iso8601(*text) : std::nullopt;
  };
  const auto started = std::chrono::system_clock::now();
  for (const auto& job : scheduler_.jobs()) {
    const auto it = saved.find(job->name());
    metrics_.declare_job(job->name(), it == saved.end() ? std::nullopt : instant(it->second.last_success_at));
    if (job->pulls()) {
      as_of_before_[job.get()] = (it == saved.end() ? std::nullopt : instant(it->second.data_as_of)).value_or(started);
    }
  }
}

void ProgressReport::export_figures() {
  metrics_.set_ledger(ledger_.backlog());
  const auto oldest = ledger_.oldest_waiting_since();
  double oldest_age = 0;
  if (oldest) {
    if (const auto since = timestamps::parse_iso8601(*oldest)) {
      oldest_age = std::max(0.0, std::chrono::duration<double>(timestamps::Clock::now() - *since).count());
    }
  }
  metrics_.set_oldest_waiting_age(oldest_age);
  metrics_.set_tracking_marks(marks_.counts());

  const auto now = std::chrono::system_clock::now();
  std::vector<JobStats> stats;
  for (const auto& job : scheduler_.jobs()) {
    const Scheduler::Figures figures = scheduler_.figures(*job);
    const auto as_of = job->data_as_of();
    if (as_of) {
      metrics_.set_lag(job->name(), now - *as_of);
    } else if (const auto before = as_of_before_.find(job.get()); before != as_of_before_.end()) {
      metrics_.set_lag(job->name(), now - before->second);
    }
    const auto text = [](const auto& when) {
      return when ? std::optional(timestamps::format_iso8601_z(*when)) : std::nullopt;
    };
    JobStats job_stats{.job = std::string(job->name()),
                       .runs = figures.runs,
                       .failed_runs = figures.failed_runs,
                       .items = figures.settled,
                       .last_run_seconds = figures.last_run_seconds,
                       .last_success_at = text(figures.last_success),
                       .data_as_of = text(as_of),
                       .failed_in_a_row = figures.failed_in_a_row,
                       .paused = job->paused(),
                       .last_error_at = text(figures.error_at),
                       .last_error = figures.error};
    if (const api::AnswerLog* answers = scheduler_.find_answer_log(job->name())) {
      job_stats.last_answer_at = text(answers->answered_at);
      job_stats.last_answer_status = answers->status;
      // The newer of the job's last failed call and its last run that threw.
      if (answers->failed_at && (!figures.error_at || *answers->failed_at > *figures.error_at)) {
        job_stats.last_error_at = text(answers->failed_at);
        job_stats.last_error = answers->failure;
      }
    }
    stats.push_back(std::move(job_stats));
  }
  save_job_stats(store_, stats);
}

void ProgressReport::report(std::chrono::steady_clock::duration elapsed) {
  export_figures();

  const double seconds = std::max(std::chrono::duration<double>(elapsed).count(), 1e-3);
  int total = 0;
  std::string parts;
  for (const auto& job : scheduler_.jobs()) {
    const int remaining = job->backlog();
    const long settled = scheduler_.settled(*job);
    const long done = settled - settled_before_[job.get()];
    settled_before_[job.get()] = settled;
    const double rate = done / seconds;
    // One request per item at best: the budget bounds the rate whatever the recent past.
    const double eta = remaining == 0 ? 0 : remaining / std::max(std::min(rate, budget_per_second_), 1e-9);
    metrics_.set_backlog(job->name(), remaining, rate > 0 || remaining == 0 ? eta : remaining / budget_per_second_);
    if (remaining == 0) continue;
    total += remaining;
    parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", job->name(), remaining);
    if (rate > 0) {
      spdlog::info("{}: {} done in the last {}, {} left; {:.1f}/s, about {} at this rate", job->name(), done,
                   rough_duration(seconds), remaining, rate, rough_duration(eta));
    } else {
      spdlog::info("{}: {} left, none done in the last {}{}; the rate budget allows at best {}", job->name(),
                   remaining, rough_duration(seconds), job->paused() ? " (paused until an operator acts: see the error above)" : "",
                   rough_duration(remaining / budget_per_second_));
    }
  }
  status_ = total == 0 ? "Running; no backlog" : fmt::format("Running; backlog {} ({})", total, parts);
}

}  // namespace fulfillsync::daemon
