#include "fulfillsync/daemon/job/sync_metrics.hpp"

#include <algorithm>
#include <string>

#include "fulfillsync/common/invariant.hpp"

namespace fulfillsync::daemon {
namespace {

// Not `job`: Prometheus sets that label on every scraped series to the scrape job's name, and with
// its default honor_labels: false a `job` label from the target would be renamed `exported_job`.
constexpr const char* kJobLabel = "sync_job";

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

SyncMetrics::SyncMetrics(prometheus::Registry& registry)
    : registry_(registry),
      items_(prometheus::BuildCounter()
                 .Name("fulfillsync_sync_items_total")
                 .Help("Items settled by each job, by outcome.")
                 .Register(registry),
             {std::string(kJobLabel), "outcome"}),
      unapplied_(prometheus::BuildCounter()
                     .Name("fulfillsync_unapplied_changes_total")
                     .Help("Changes at the merchant to an order or return already created, which the API cannot "
                           "apply (the result table's note column names the row).")
                     .Register(registry)),
      result_write_failures_(prometheus::BuildCounter()
                                 .Name("fulfillsync_result_write_failures_total")
                                 .Help("Failed writes to the merchant's result tables (replayed later).")
                                 .Register(registry)
                                 .Add({})),
      ahead_of_clock_(prometheus::BuildCounter()
                          .Name("fulfillsync_source_rows_ahead_of_clock_total")
                          .Help("Source row versions whose updated_at is more than merchant.max_clock_skew ahead of "
                                "this server's clock, rejected until the row or the clock moves.")
                          .Register(registry)),
      runs_(prometheus::BuildCounter()
                .Name("fulfillsync_job_runs_total")
                .Help("Job runs, by result (ok, error).")
                .Register(registry)),
      run_errors_(prometheus::BuildCounter()
                      .Name("fulfillsync_job_run_errors_total")
                      .Help("Job runs that stopped on an error of a store, by where: merchant_database (unreadable, "
                            "locked, a source table or column missing), checkpoint_store, other.")
                      .Register(registry)),
      run_duration_(prometheus::BuildHistogram()
                        .Name("fulfillsync_job_run_duration_seconds")
                        .Help("How long one run of a job took.")
                        .Register(registry)),
      last_success_(prometheus::BuildGauge()
                        .Name("fulfillsync_job_last_success_timestamp_seconds")
                        .Help("When a run of the job last ended without error, in Unix time; 0: never (since the "
                              "checkpoint store was created).")
                        .Register(registry)),
      paused_(prometheus::BuildGauge()
                  .Name("fulfillsync_job_paused")
                  .Help("1 while the job is paused until an operator acts: credentials or TLS certificate refused.")
                  .Register(registry)),
      certificate_refusals_(prometheus::BuildCounter()
                                .Name("fulfillsync_tls_certificate_refusals_total")
                                .Help("Calls that failed because the provider's TLS certificate could not be verified "
                                      "(api.ca_file, api.base_url); the job pauses.")
                                .Register(registry)),
      provider_reachable_(prometheus::BuildGauge()
                              .Name("fulfillsync_provider_reachable")
                              .Help("0 while the provider cannot be reached (no connection, no answer or a 5xx "
                                    "after the retries of api.retry), else 1.")
                              .Register(registry)
                              .Add({})),
      ledger_(prometheus::BuildGauge()
                  .Name("fulfillsync_ledger_entries")
                  .Help("Entries of the outbound ledger, by kind and state.")
                  .Register(registry)),
      oldest_waiting_(prometheus::BuildGauge()
                          .Name("fulfillsync_ledger_oldest_waiting_age_seconds")
                          .Help("Age of the oldest ledger entry waiting to be sent or looked up; 0 when none waits.")
                          .Register(registry)
                          .Add({})),
      backlog_(prometheus::BuildGauge()
                   .Name("fulfillsync_job_backlog_items")
                   .Help("Items a job still has to send or look up (a pull job: 1 while its last window failed).")
                   .Register(registry)),
      eta_(prometheus::BuildGauge()
               .Name("fulfillsync_job_backlog_eta_seconds")
               .Help("Estimated time to clear a job's backlog at its current rate and the rate budget.")
               .Register(registry)),
      lag_(prometheus::BuildGauge()
               .Name("fulfillsync_pull_lag_seconds")
               .Help("How old the provider's data a pull job last committed is: now minus the start of its last "
                     "whole window, pass or cycle.")
               .Register(registry)),
      pull_interval_(prometheus::BuildGauge()
                         .Name("fulfillsync_pull_interval_seconds")
                         .Help("How often a pull job that reads all of its data in a cycle or pass begins one "
                               "(pull_lots, pull_stock: their configured interval).")
                         .Register(registry)),
      pull_rest_(prometheus::BuildGauge()
                     .Name("fulfillsync_pull_rest_seconds")
                     .Help("How long a pull job the scheduler paces (pull_shipments, pull_returns) rests after its "
                           "last run, before jitter: its interval, doubled after each run that found nothing new, "
                           "up to 8 times.")
                     .Register(registry)),
      unresolved_watched_skus_(prometheus::BuildGauge()
                                   .Name("fulfillsync_watched_skus_unresolved")
                                   .Help("Watched SKUs the SKU map does not hold, as of pull_lots' last cycle: no "
                                         "lots are read for them.")
                                   .Register(registry)
                                   .Add({})),
      marks_(prometheus::BuildGauge()
                 .Name("fulfillsync_tracking_marks")
                 .Help("Tracking marks in the checkpoint store, by state (marked ones are dropped once the merchant's "
                       "row shows them).")
                 .Register(registry)),
      cancel_mismatches_(prometheus::BuildGauge()
                             .Name("fulfillsync_cancel_mismatches")
                             .Help("Orders cancelled at the merchant whose cancel the provider does not show and that "
                                   "cannot be cancelled any more (refused, or shipped); `status` lists them.")
                             .Register(registry)
                             .Add({})),
      clock_steps_back_(prometheus::BuildCounter()
                            .Name("fulfillsync_source_clock_steps_back_total")
                            .Help("Source rows whose updated_at is older by more than merchant.look_back than a "
                                  "change read before them (by the change log) or than the read position (by "
                                  "updated_at): the merchant's clock stepped back.")
                            .Register(registry)),
      reconcile_found_(prometheus::BuildCounter()
                           .Name("fulfillsync_reconcile_found_total")
                           .Help("Source rows the reconciliation sweep found unsent or changed without the change "
                                 "being seen: each one a bug or a clock problem to investigate.")
                           .Register(registry)) {
  provider_reachable_.Set(1);  // nothing known to be wrong yet
  // Every kind, so that increase() sees the first one.
  for (const LedgerKind kind : kLedgerKinds) {
    unapplied_.Add({{"kind", std::string(to_string(kind))}});
  }
}

void SyncMetrics::declare_job(std::string_view job,
                              std::optional<std::chrono::system_clock::time_point> last_success) {
  const std::string name(job);
  for (const char* result : {"ok", "error"}) runs_.Add({{kJobLabel, name}, {"result", result}});
  for (const RunError where : {RunError::merchant_database, RunError::checkpoint_store, RunError::other}) {
    run_errors_.Add({{kJobLabel, name}, {"where", std::string(to_string(where))}});
  }
  certificate_refusals_.Add({{kJobLabel, name}});
  backlog_.Add({{kJobLabel, name}});
  eta_.Add({{kJobLabel, name}});
  last_success_.Add({{kJobLabel, name}})
      .Set(last_success ? std::chrono::duration<double>(last_success->time_since_epoch()).count() : 0);
}

void SyncMetrics::count_items(std::string_view job, std::string_view outcome, double count) {
  items_.with({job, outcome}).Increment(count);
}

void SyncMetrics::count_unapplied_change(LedgerKind kind) {
  unapplied_.Add({{"kind", std::string(to_string(kind))}}).Increment();
}

void SyncMetrics::count_result_write_failure() { result_write_failures_.Increment(); }

void SyncMetrics::count_row_ahead_of_clock(LedgerKind kind) {
  ahead_of_clock_.Add({{"kind", std::string(to_string(kind))}}).Increment();
}

void SyncMetrics::observe_run(std::string_view job, bool ok, std::chrono::steady_clock::duration duration) {
  runs_.Add({{kJobLabel, std::string(job)}, {"result", ok ? "ok" : "error"}}).Increment();
  static const prometheus::Histogram::BucketBoundaries buckets = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60};
  run_duration_.Add({{kJobLabel, std::string(job)}}, buckets).Observe(std::chrono::duration<double>(duration).count());
  if (ok) last_success_.Add({{kJobLabel, std::string(job)}}).Set(now_seconds());
}

std::string_view to_string(SyncMetrics::RunError where) {
  switch (where) {
    case SyncMetrics::RunError::merchant_database: return "merchant_database";
    case SyncMetrics::RunError::checkpoint_store: return "checkpoint_store";
    case SyncMetrics::RunError::other: return "other";
  }
  FULFILLSYNC_UNREACHABLE("every RunError is named");
}

void SyncMetrics::count_run_error(std::string_view job, RunError where) {
  run_errors_.Add({{kJobLabel, std::string(job)}, {"where", std::string(to_string(where))}}).Increment();
}

void SyncMetrics::set_paused(std::string_view job, bool paused) {
  paused_.Add({{kJobLabel, std::string(job)}}).Set(paused ? 1 : 0);
}

void SyncMetrics::count_certificate_refusal(std::string_view job) {
  certificate_refusals_.Add({{kJobLabel, std::string(job)}}).Increment();
}

bool SyncMetrics::set_provider_reachable(bool reachable) {
  const bool changed = provider_reachable() != reachable;
  provider_reachable_.Set(reachable ? 1 : 0);
  return changed;
}

void SyncMetrics::export_merchant_listener() {
  listener_up_ = &prometheus::BuildGauge()
                      .Name("fulfillsync_merchant_listener_up")
                      .Help("1 while the daemon listens for the merchant database's change notifications "
                            "(PostgreSQL LISTEN), else 0: the jobs' intervals alone find changes meanwhile.")
                      .Register(registry_)
                      .Add({});
  listener_reconnects_ = &prometheus::BuildCounter()
                              .Name("fulfillsync_merchant_listener_reconnects_total")
                              .Help("Times the change listener listened again after losing its connection.")
                              .Register(registry_)
                              .Add({});
}

void SyncMetrics::set_merchant_listener_up(bool up) {
  if (listener_up_ != nullptr) listener_up_->Set(up ? 1 : 0);
}

void SyncMetrics::count_merchant_listener_reconnect() {
  if (listener_reconnects_ != nullptr) listener_reconnects_->Increment();
}

bool SyncMetrics::provider_reachable() const { return provider_reachable_.Value() != 0; }

void SyncMetrics::set_ledger(const std::map<std::pair<LedgerKind, LedgerState>, int>& counts) {
  for (const LedgerKind kind : kLedgerKinds) {
    // `created` for creates, `applied` for cancels: a series only where the state can occur.
    for (const LedgerState state : {LedgerState::pending, LedgerState::in_flight, done_state(kind),
                                    LedgerState::rejected, LedgerState::unknown, LedgerState::withdrawn}) {
      const auto it = counts.find({kind, state});
      ledger_.Add({{"kind", std::string(to_string(kind))}, {"state", std::string(to_string(state))}})
          .Set(it == counts.end() ? 0 : it->second);
    }
  }
}

void SyncMetrics::set_oldest_waiting_age(double seconds) { oldest_waiting_.Set(seconds); }

void SyncMetrics::set_cancel_mismatches(int count) { cancel_mismatches_.Set(count); }

void SyncMetrics::set_backlog(std::string_view job, double remaining, double eta_seconds) {
  backlog_.Add({{kJobLabel, std::string(job)}}).Set(remaining);
  eta_.Add({{kJobLabel, std::string(job)}}).Set(eta_seconds);
}

void SyncMetrics::set_lag(std::string_view job, std::chrono::system_clock::duration lag) {
  lag_.Add({{kJobLabel, std::string(job)}}).Set(std::max(0.0, std::chrono::duration<double>(lag).count()));
}

void SyncMetrics::set_pull_interval(std::string_view job, std::chrono::milliseconds interval) {
  pull_interval_.Add({{kJobLabel, std::string(job)}}).Set(std::chrono::duration<double>(interval).count());
}

void SyncMetrics::set_pull_rest(std::string_view job, std::chrono::milliseconds rest) {
  pull_rest_.Add({{kJobLabel, std::string(job)}}).Set(std::chrono::duration<double>(rest).count());
}

void SyncMetrics::set_unresolved_watched_skus(int count) { unresolved_watched_skus_.Set(count); }

void SyncMetrics::set_tracking_marks(const std::map<MarkState, int>& counts) {
  for (const MarkState state : {MarkState::pending, MarkState::in_flight, MarkState::marked, MarkState::unknown}) {
    const auto it = counts.find(state);
    marks_.Add({{"state", std::string(to_string(state))}}).Set(it == counts.end() ? 0 : it->second);
  }
}

void SyncMetrics::count_clock_step_back(LedgerKind kind) {
  clock_steps_back_.Add({{"kind", std::string(to_string(kind))}}).Increment();
}

void SyncMetrics::count_reconcile_found(std::string_view table) {
  reconcile_found_.Add({{"table", std::string(table)}}).Increment();
}

}  // namespace fulfillsync::daemon
