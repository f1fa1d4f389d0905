#pragma once
// The sync jobs' metrics. Labels are bounded: job names, outcomes, ledger kinds and states; never a
// reference id.
#include <chrono>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "fulfillsync/api/metric_children.hpp"
#include "fulfillsync/daemon/store/outbound_ledger.hpp"
#include "fulfillsync/daemon/store/tracking_mark_ledger.hpp"

namespace fulfillsync::daemon {

class SyncMetrics {
 public:
  explicit SyncMetrics(prometheus::Registry& registry);

  // Creates a job's series before its first run, so that a job that has never run, or never
  // succeeded, is visible as such rather than absent: its run counters (ok, error) and run errors
  // at 0, its backlog, and its last success (`last_success`, restored from the checkpoint store, or
  // 0 for never). A pull job's lag is set by set_lag().
  void declare_job(std::string_view job, std::optional<std::chrono::system_clock::time_point> last_success);

  // Items a job settled, by outcome. Pushes: created, adopted (found at the provider after an
  // unclear answer), cancelled, invalid (refused by local validation), rejected (by the provider),
  // withdrawn (cancelled before it was created), unknown (to be looked up), retried. Pulls: written,
  // removed (lots), timeline, timeline_failed, unreadable, refused. Marks: marked, adopted, failed,
  // unknown.
  void count_items(std::string_view job, std::string_view outcome, double count = 1);
  // A change to a created order or return that the API cannot apply.
  void count_unapplied_change(LedgerKind kind);
  // A result-table write that failed (it is replayed from the ledger).
  void count_result_write_failure();
  // A source row version whose updated_at is more than merchant.max_clock_skew ahead of this
  // server's clock, rejected until it or the clock moves.
  void count_row_ahead_of_clock(LedgerKind kind);

  void observe_run(std::string_view job, bool ok, std::chrono::steady_clock::duration duration);
  // Where a run that threw failed: the merchant database (unreadable, locked, a source table or
  // column missing) or the checkpoint store.
  enum class RunError { merchant_database, checkpoint_store, other };
  void count_run_error(std::string_view job, RunError where);
  void set_paused(std::string_view job, bool paused);
  // A call that failed because the provider's TLS certificate was refused.
  void count_certificate_refusal(std::string_view job);
  // Whether the last call got through to the provider or not (no connection, no answer or a 5xx
  // after the retries of api.retry). Returns whether that changed.
  bool set_provider_reachable(bool reachable);
  bool provider_reachable() const;

  void set_ledger(const std::map<std::pair<LedgerKind, LedgerState>, int>& counts);
  void set_oldest_waiting_age(double seconds);
  void set_backlog(std::string_view job, double remaining, double eta_seconds);

  // How old the data a pull job last committed is: now minus when its last whole window, pass or
  // cycle began.
  void set_lag(std::string_view job, std::chrono::system_clock::duration lag);
  // How often a pull job that reads all of its data in a cycle or pass begins one (pull_lots,
  // pull_stock: their configured interval), so that an alert can measure the lag against it.
  void set_pull_interval(std::string_view job, std::chrono::milliseconds interval);
  // The rest the scheduler gives a pull job it paces (pull_shipments, pull_returns) after its last
  // run, before jitter: its interval, longer while its runs find nothing new. An idle pull's lag
  // grows with it, so that an alert can measure the lag against it.
  void set_pull_rest(std::string_view job, std::chrono::milliseconds rest);
  // Watched SKUs the SKU map does not hold, as of pull_lots' last cycle: their lots are not read.
  void set_unresolved_watched_skus(int count);
  void set_tracking_marks(const std::map<MarkState, int>& counts);
  // Orders cancelled at the merchant whose cancel the provider does not show and cannot be sent again
  // (refused, or the order shipped): listed by `status`, for an operator to settle.
  void set_cancel_mismatches(int count);

  // A source row read by the change log whose updated_at is older than one read before it by more
  // than merchant.look_back: the merchant's clock stepped back (the row is taken all the same).
  void count_clock_step_back(LedgerKind kind);
  // A source row the reconciliation sweep found that change detection missed.
  void count_reconcile_found(std::string_view table);

  // The merchant database's change listener (PostgreSQL's LISTEN), exported only where there is one:
  // whether it listens now, and how often it listened again after losing its connection.
  void export_merchant_listener();
  void set_merchant_listener_up(bool up);
  void count_merchant_listener_reconnect();

 private:
  prometheus::Registry& registry_;
  prometheus::Gauge* listener_up_ = nullptr;
  prometheus::Counter* listener_reconnects_ = nullptr;
  api::MetricChildren<prometheus::Counter, 2> items_;  // counted per order: looked up without the family's lock
  prometheus::Family<prometheus::Counter>& unapplied_;
  prometheus::Counter& result_write_failures_;
  prometheus::Family<prometheus::Counter>& ahead_of_clock_;
  prometheus::Family<prometheus::Counter>& runs_;
  prometheus::Family<prometheus::Counter>& run_errors_;
  prometheus::Family<prometheus::Histogram>& run_duration_;
  prometheus::Family<prometheus::Gauge>& last_success_;
  prometheus::Family<prometheus::Gauge>& paused_;
  prometheus::Family<prometheus::Counter>& certificate_refusals_;
  prometheus::Gauge& provider_reachable_;
  prometheus::Family<prometheus::Gauge>& ledger_;
  prometheus::Gauge& oldest_waiting_;
  prometheus::Family<prometheus::Gauge>& backlog_;
  prometheus::Family<prometheus::Gauge>& eta_;
  prometheus::Family<prometheus::Gauge>& lag_;
  prometheus::Family<prometheus::Gauge>& pull_interval_;
  prometheus::Family<prometheus::Gauge>& pull_rest_;
  prometheus::Gauge& unresolved_watched_skus_;
  prometheus::Family<prometheus::Gauge>& marks_;
  prometheus::Gauge& cancel_mismatches_;
  prometheus::Family<prometheus::Counter>& clock_steps_back_;
  prometheus::Family<prometheus::Counter>& reconcile_found_;
};

std::string_view to_string(SyncMetrics::RunError where);

}  // namespace fulfillsync::daemon
