#include "cli/status_report.hpp"

#include <array>
#include <cstdint>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fulfillsync/common/invariant.hpp"
#include "fulfillsync/common/json_writer.hpp"
#include "fulfillsync/common/printable.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/daemon/push/source_intake.hpp"
#include "fulfillsync/daemon/store/job_stats.hpp"
#include "fulfillsync/daemon/store/tracking_mark_ledger.hpp"
#include "push/cancel_push_job.hpp"
#include "pull/pull_lots.hpp"
#include "push/open_rows.hpp"
#include "service/progress_report.hpp"

namespace fulfillsync::daemon {
namespace {

constexpr std::array kKinds = {LedgerKind::order_create, LedgerKind::order_cancel, LedgerKind::return_create};
constexpr std::array kStates = {LedgerState::pending, LedgerState::in_flight, LedgerState::unknown,
                                LedgerState::created, LedgerState::applied, LedgerState::rejected,
                                LedgerState::withdrawn};

std::string_view noun(LedgerKind kind) {
  switch (kind) {
    case LedgerKind::order_create: return "order";
    case LedgerKind::order_cancel: return "cancel";
    case LedgerKind::return_create: return "return";
    case LedgerKind::product_create: return "product";
    case LedgerKind::product_update: return "product update";
  }
  return "order";
}

std::optional<double> seconds_since(const std::optional<std::string>& when) {
  const auto at = when ? timestamps::parse_iso8601(*when) : std::nullopt;
  if (!at) return std::nullopt;
  return std::chrono::duration<double>(timestamps::Clock::now() - *at).count();
}

std::string ago(const std::optional<std::string>& when) {
  const auto seconds = seconds_since(when);
  return seconds ? rough_duration(*seconds) + " ago" : "never";
}

bool nothing_ever_succeeded(const DaemonStatus& status) {
  for (const auto& job : status.jobs) {
    if (job.last_success_at) return false;
  }
  return true;
}

// A job an operator has to look at: status exits 1 for it.
bool needs_attention(const JobStats& job, int failing_after) {
  const std::string_view state = job_state(job, failing_after);
  return state == "failing" || state == "paused";
}

std::string_view health_name(Health health) {
  switch (health) {
    case Health::healthy: return "healthy";
    case Health::failing: return "failing";
    case Health::not_running: return "not_running";
  }
  FULFILLSYNC_UNREACHABLE("a Health value");
}

// "running", "stopped" (cleanly), "vanished" (ended without a stop: killed or crashed), "never_started".
std::string_view daemon_state(const DaemonStatus& status) {
  if (!status.daemon) return "never_started";
  if (status.running) return "running";
  return status.daemon->stopped_at ? "stopped" : "vanished";
}

std::string daemon_lines(const DaemonStatus& status, const std::filesystem::path& store) {
  std::string out;
  const auto& daemon = status.daemon;
  const std::string_view state = daemon_state(status);
  if (state == "never_started") {
    out += fmt::format("fulfillsyncd on {}: not running; no daemon has started on this store yet\n", store.string());
  } else if (state == "running") {
    out += fmt::format("fulfillsyncd on {}: running, PID {}, version {}, since {} ({})\n", store.string(), daemon->pid,
                       daemon->version, daemon->started_at,
                       rough_duration(seconds_since(daemon->started_at).value_or(0)));
  } else if (state == "stopped") {
    out += fmt::format("fulfillsyncd on {}: not running; PID {} stopped at {} ({}), after running since {}\n",
                       store.string(), daemon->pid, *daemon->stopped_at, ago(daemon->stopped_at), daemon->started_at);
  } else {
    out += fmt::format("fulfillsyncd on {}: not running; PID {}, started at {}, ended without a clean stop (killed "
                       "or crashed: see its log)\n",
                       store.string(), daemon->pid, daemon->started_at);
  }
  if (status.running && daemon->waiting_for) {
    out += fmt::format("Waiting for {}\n", text::printable(*daemon->waiting_for));
  }
  for (const auto& job : status.jobs) {
    if (status.running && job.paused) {
      out += fmt::format("Waiting for an operator: {} is paused because the provider refused the credentials or its "
                         "TLS certificate (the log says which, and the fix)\n",
                         job.job);
    }
  }
  if (nothing_ever_succeeded(status)) {
    out += "Nothing has succeeded yet: no job run has ever ended without an error on this store\n";
  }
  std::vector<std::string> failing;
  for (const auto& job : status.jobs) {
    if (needs_attention(job, status.failing_after)) {
      failing.push_back(fmt::format("{} {}", job.job, job_state(job, status.failing_after)));
    }
  }
  switch (status.health) {
    case Health::healthy: out += "Health: no job is failing or paused\n"; break;
    case Health::failing:
      out += fmt::format("Health: FAILING: {}\n", failing.empty() ? std::string("the jobs wait for the provider")
                                                                  : fmt::format("{}", fmt::join(failing, ", ")));
      break;
    case Health::not_running: break;
  }
  return out;
}

}  // namespace

std::string shortened_reference(std::string_view reference) {
  constexpr std::size_t kShown = 40;
  const std::string shown = text::printable(reference);
  if (shown.size() <= kShown) return shown;
  std::size_t cut = kShown - 3;
  while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return shown.substr(0, cut) + "...";
}

std::string_view job_state(const JobStats& job, int failing_after) {
  if (job.paused) return "paused";
  if (job.failed_in_a_row >= failing_after) return "failing";
  if (job.failed_in_a_row > 0) return "retrying";
  if (job.runs == 0 && !job.last_success_at) return "not_run";
  return "ok";
}

DaemonStatus read_daemon_status(CheckpointStore& store, int failing_after) {
  DaemonStatus status;
  status.failing_after = failing_after;
  status.daemon = load_daemon_record(store);
  status.running = status.daemon && is_running(*status.daemon, store.path());
  status.jobs = load_job_stats(store);
  if (!status.running) {
    status.health = Health::not_running;
    return status;
  }
  status.health = status.daemon->waiting_for ? Health::failing : Health::healthy;
  for (const auto& job : status.jobs) {
    if (needs_attention(job, failing_after)) status.health = Health::failing;
  }
  return status;
}

std::string format_summary(OutboundLedger& ledger, int rejections, OutboundLedger::Kinds kinds) {
  const auto counts = ledger.backlog();
  std::string out = fmt::format("{:<15}", "");
  for (const LedgerState state : kStates) out += fmt::format("{:>11}", to_string(state));
  out += '\n';
  for (const LedgerKind kind : kKinds) {
    out += fmt::format("{:<15}", to_string(kind));
    for (const LedgerState state : kStates) {
      const auto it = counts.find({kind, state});
      out += fmt::format("{:>11}", it == counts.end() ? 0 : it->second);
    }
    out += '\n';
  }
  const auto rejected = ledger.latest(LedgerState::rejected, rejections, kinds);
  if (!rejected.empty()) {
    out += fmt::format("Latest rejections (newest first; fix the row, or 'fulfillsyncd retry'):\n");
    for (const auto& entry : rejected) {
      out += fmt::format("  {} {} ({}): {}\n", noun(entry.kind), shortened_reference(entry.source_key), entry.updated_at,
                         text::printable(entry.last_error));
    }
  }
  return out;
}

namespace {

// Where the table is read by the change log: its position and the entries after it.
std::optional<std::string> change_log_status(CheckpointStore& store, merchant::SourceKind kind,
                                             merchant::SourceTables* merchant) {
  const bool orders = kind == merchant::SourceKind::orders;
  const auto saved = store.cursor(orders ? SourceIntake<merchant::OrderRow>::sequence_name()
                                         : SourceIntake<merchant::ReturnRow>::sequence_name());
  if (!saved) return std::nullopt;
  constexpr std::string_view kCatchUp = "catch-up ";
  const bool catching_up = saved->starts_with(kCatchUp);
  const std::string position = catching_up ? saved->substr(kCatchUp.size()) : *saved;
  std::string out = fmt::format("Read {} by the change log up to {}{}", orders ? merchant::kOrdersTable
                                                                               : merchant::kReturnsTable,
                                position.empty() ? "0" : position,
                                catching_up ? " (rows changed before the log: still read by updated_at)" : "");
  try {
    if (merchant != nullptr && merchant->has_change_log()) {
      out += fmt::format("; {} rows changed since, not read yet", merchant->count_rows_changed_after(kind, position));
    }
  } catch (const merchant::MerchantDatabaseError& e) {
    out += fmt::format("; the rows not read yet cannot be counted: {}", text::printable(e.what()));
  }
  return out + '\n';
}

// The rows fulfillsync_cancel_mismatches counts and those the daemon sends again, as the last pull
// left the result table; nothing when the merchant database cannot be read.
constexpr std::size_t kMismatchesRead = 1000;
std::optional<std::vector<merchant::SyncResult>> cancel_mismatches(merchant::SyncResults* results) {
  if (results == nullptr) return std::nullopt;
  try {
    return results->cancel_mismatches(kMismatchesRead);
  } catch (const merchant::MerchantDatabaseError&) {
    return std::nullopt;  // no result tables yet, or the file cannot be read: said as "cannot tell"
  }
}

std::string_view mismatch_action(const merchant::SyncResult& row) {
  return classify_cancel_mismatch(row) == CancelMismatch::send_again ? "cancel being sent again"
                                                                      : "cannot be cancelled any more";
}

std::string format_cancel_mismatches(merchant::SyncResults* results) {
  constexpr std::size_t kListed = 50;
  const auto rows = cancel_mismatches(results);
  if (!rows) {
    return results == nullptr ? "" : "Cancels the provider does not show: cannot tell (the result table cannot be read)\n";
  }
  if (rows->empty()) return "Cancels the provider does not show: none\n";
  std::string out = fmt::format("Cancels the provider does not show: {}{}\n", rows->size(),
                                rows->size() == kMismatchesRead ? " or more" : "");
  for (std::size_t i = 0; i < rows->size() && i < kListed; ++i) {
    const auto& row = (*rows)[i];
    out += fmt::format("  order {} (provider order {}): {}, the provider shows {}: {}",
                       shortened_reference(row.reference_id), row.remote_id.value_or(0), row.state,
                       text::printable(row.remote_status.value_or("")), mismatch_action(row));
    if (row.last_error) out += fmt::format(" ({})", text::printable(*row.last_error));
    out += '\n';
  }
  if (rows->size() > kListed) out += fmt::format("  and {} more\n", rows->size() - kListed);
  return out;
}

std::string catalog_counts(const CatalogBacklog& backlog) {
  return fmt::format("{} not created yet, {} with changes not sent yet, {} awaiting an unclear outcome, {} rejected",
                     backlog.not_created, backlog.changes_unsent, backlog.unclear, backlog.rejected);
}

std::string format_catalog(const CatalogStatus& catalog) {
  const CatalogBacklog& backlog = catalog.backlog;
  std::string out;
  if (!catalog.push_products) {
    out = fmt::format("Catalog: push_products is off (sync.jobs.push_products); the ledger holds {}\n",
                      catalog_counts(backlog));
  } else if (!backlog.products) {
    out = fmt::format("Catalog, from the ledger alone ({} cannot be read: {}): {}\n", merchant::kProductsTable,
                      backlog.source_problem, catalog_counts(backlog));
  } else if (*backlog.products == 0 && backlog.nothing_waits()) {
    out = fmt::format("Catalog: {} is empty\n", merchant::kProductsTable);
  } else if (backlog.nothing_waits()) {
    out = fmt::format("Catalog: {} products, each at the provider as {} has it\n", *backlog.products,
                      merchant::kProductsTable);
  } else {
    out = fmt::format("Catalog: {} products; {}\n", *backlog.products, catalog_counts(backlog));
  }
  if (backlog.rejections.empty()) return out;
  out += "Catalog rejections (newest first; fix the row, or once the provider's side is fixed 'fulfillsyncd retry "
         "--product REFERENCE_ID' or '--sku SKU'):\n";
  for (const CatalogRejection& rejection : backlog.rejections) {
    out += fmt::format("  {} {}{} ({}): {}\n", noun(rejection.kind), shortened_reference(rejection.reference_id),
                       rejection.skus.empty() ? "" : fmt::format(" SKU {}", fmt::join(rejection.skus, ", ")),
                       rejection.at, rejection.reason);
  }
  if (backlog.rejected > static_cast<std::int64_t>(backlog.rejections.size())) {
    out += fmt::format("  and {} more\n", backlog.rejected - static_cast<std::int64_t>(backlog.rejections.size()));
  }
  return out;
}

}  // namespace

std::optional<CatalogStatus> read_catalog_status(OutboundLedger& ledger, merchant::SourceTables* source,
                                                 bool push_products) {
  if (push_products) return CatalogStatus{true, catalog_backlog(ledger, source, kCatalogRejectionsListed)};
  if (!ledger_holds_catalog(ledger)) return std::nullopt;
  // Off: the catalog's tables may be gone; what the ledger holds is what there is to say.
  return CatalogStatus{false, catalog_backlog(ledger, nullptr, kCatalogRejectionsListed)};
}

std::optional<std::int64_t> source_rows_waiting(CheckpointStore& store, OutboundLedger& ledger,
                                                merchant::SourceTables* merchant) {
  const auto since = saved_starting_point(store);
  if (merchant == nullptr || !since) return std::nullopt;
  try {
    return count_open_rows_ledger_lacks(*merchant, ledger, merchant::SourceKind::orders, *since) +
           count_open_rows_ledger_lacks(*merchant, ledger, merchant::SourceKind::returns, *since);
  } catch (const merchant::MerchantDatabaseError&) {
    return std::nullopt;  // no result tables yet, or the file cannot be read: cannot tell
  }
}

std::string format_status(CheckpointStore& store, OutboundLedger& ledger, merchant::SourceTables* merchant,
                          merchant::SyncResults* results, const DaemonStatus& daemon,
                          const std::optional<CatalogStatus>& catalog) {
  std::string out = daemon_lines(daemon, store.path()) + '\n';
  const auto since = saved_starting_point(store);
  if (since) {
    out += fmt::format("Pushing rows changed at or after {}\n", *since);
  } else {
    out += "Not started yet: the first start fixes the starting point (sync.orders_since, or that moment)\n";
  }
  for (const auto& [kind, name] : {std::pair{merchant::SourceKind::orders, SourceIntake<merchant::OrderRow>::cursor_name()},
                                   std::pair{merchant::SourceKind::returns,
                                             SourceIntake<merchant::ReturnRow>::cursor_name()}}) {
    const auto saved = store.cursor(name);
    const auto cursor = saved ? decode_cursor(*saved) : std::nullopt;
    const std::string table = name.substr(name.find(':') + 1);
    if (const auto line = change_log_status(store, kind, merchant)) {
      out += *line;
      continue;
    }
    out += fmt::format("Read {} up to {}", table,
                       cursor ? fmt::format("{} {}", text::printable(cursor->updated_at),
                                            shortened_reference(cursor->reference_id))
                              : "nothing yet");
    if (merchant != nullptr && since) {
      const merchant::ChangeCursor after = cursor ? std::max(*cursor, merchant::ChangeCursor{*since, ""})
                                                  : merchant::ChangeCursor{*since, ""};
      try {
        out += fmt::format("; {} rows changed since, not read yet", merchant->count_changes_after(kind, after));
      } catch (const merchant::MerchantDatabaseError& e) {
        out += fmt::format("; the rows not read yet cannot be counted: {}", text::printable(e.what()));
      }
    }
    out += '\n';
  }
  const auto oldest = ledger.oldest_waiting_since();
  if (oldest) {
    const auto waiting_since = timestamps::parse_iso8601(*oldest);
    const double age =
        waiting_since ? std::chrono::duration<double>(timestamps::Clock::now() - *waiting_since).count() : 0;
    out += fmt::format("Oldest entry waiting to be sent or looked up: {} ago ({})\n", rough_duration(age), *oldest);
  }
  // The reconciliation sweep's comparison: rows change detection has not taken yet, or missed.
  const auto waiting = source_rows_waiting(store, ledger, merchant);
  if (waiting && *waiting > 0) {
    out += fmt::format("{}{} source rows have a version the ledger does not hold yet: change detection takes them "
                       "when it reads them, else the reconciliation sweep within merchant.reconcile_interval\n",
                       oldest ? "" : "Nothing in the ledger waits, but ", *waiting);
  } else if (!oldest && !waiting && merchant != nullptr && since) {
    out += "Nothing in the ledger waits; the source rows waiting cannot be counted (the merchant's tables cannot "
           "be read)\n";
  } else if (!oldest) {
    const bool catalog_waits = catalog && catalog->backlog.not_created + catalog->backlog.changes_unsent > 0;
    out += catalog_waits ? "No order or return waiting to be sent\n" : "Nothing waiting to be sent\n";
  }
  out += format_cancel_mismatches(results);
  if (catalog) out += format_catalog(*catalog);
  out += '\n' + format_summary(ledger, 10, catalog ? OutboundLedger::Kinds::orders_and_returns
                                                  : OutboundLedger::Kinds::all);
  out += '\n' + format_pull_side(store, daemon.failing_after);
  return out;
}

std::string format_pull_side(CheckpointStore& store, int failing_after) {
  std::string out;
  const auto now = timestamps::Clock::now();
  const auto window = store.cursor("pull_shipments");
  out += fmt::format("Shipments pulled up to the provider's changes of {}\n", window.value_or("(none yet)"));

  TrackingMarkLedger marks(store);
  const auto counts = marks.counts();
  out += "Tracking marks:";
  for (const MarkState state : {MarkState::pending, MarkState::in_flight, MarkState::unknown}) {
    const auto it = counts.find(state);
    out += fmt::format(" {} {}", to_string(state), it == counts.end() ? 0 : it->second);
  }
  out += " (marked ones leave the store once the merchant's tracking rows show them)\n";
  // pull_stock saves `<pass start> <next page>` while a pass is under way, the start alone once done.
  if (const auto stock = store.cursor("pull_stock")) {
    const auto space = stock->find(' ');
    out += fmt::format("SKU map: {} {}\n", space == std::string::npos ? "last whole pass began" : "a pass began",
                       stock->substr(0, space));
  }
  if (const auto skus = store.cursor(kUnresolvedWatchedSkus); skus && !skus->empty()) {
    out += fmt::format("Watched SKUs not in the SKU map (no lots read; watched_sku_sync says why): {}\n", *skus);
  }
  const auto failing = marks.in_state(MarkState::pending, 1000);
  for (const auto& mark : failing) {
    if (!mark.last_error.empty()) {
      out += fmt::format("  shipment {}: {} attempts, last: {}\n", mark.shipment_id, mark.attempts,
                         text::printable(mark.last_error));
    }
  }

  const auto stats = load_job_stats(store);
  if (stats.empty()) return out + "No job figures yet (the daemon saves them every sync.progress_interval)\n";
  out += fmt::format("\nJobs, as the daemon saved them {}:\n", ago(stats.front().updated_at));
  out += fmt::format("{:<15}{:>8}{:>8}{:>10}{:>10}  {:<16}{:<8}{}\n", "", "runs", "failed", "items", "last run",
                     "last success", "lag", "state");
  for (const auto& job : stats) {
    const std::string lag =
        job.data_as_of
            ? rough_duration(
                  std::chrono::duration<double>(now - timestamps::parse_iso8601(*job.data_as_of).value_or(now)).count())
            : std::string("-");
    out += fmt::format("{:<15}{:>8}{:>8}{:>10}{:>9.2f}s  {:<16}{:<8}{}\n", job.job, job.runs, job.failed_runs,
                       job.items, job.last_run_seconds, ago(job.last_success_at), lag, job_state(job, failing_after));
    out += fmt::format("{:<15}provider's last answer: {}", "",
                       job.last_answer_at ? fmt::format("HTTP {}, {}", job.last_answer_status, ago(job.last_answer_at))
                                          : std::string("none yet"));
    if (job.last_error_at) {
      out += fmt::format("; last error {}: {}", ago(job.last_error_at), text::printable(job.last_error));
    }
    out += '\n';
  }
  return out;
}

std::string format_status_json(const std::filesystem::path& store, OutboundLedger* ledger, const DaemonStatus& status,
                               merchant::SyncResults* results, std::optional<std::int64_t> source_rows_waiting,
                               const std::optional<CatalogStatus>& catalog) {
  json::JsonWriter w;
  w.begin_object();
  w.field("checkpoint_store", store.string());
  w.field("health", health_name(status.health));
  w.key("daemon").begin_object();
  w.field("state", daemon_state(status));
  if (status.daemon) {
    w.field("pid", status.daemon->pid);
    w.field("version", status.daemon->version);
    w.field("started_at", status.daemon->started_at);
    if (status.running) {
      w.field("uptime_seconds", static_cast<std::int64_t>(seconds_since(status.daemon->started_at).value_or(0)));
    } else {
      w.null_field("uptime_seconds");
    }
    w.field("stopped_at", status.daemon->stopped_at);
    w.field("waiting_for", status.running && status.daemon->waiting_for
                               ? std::optional(text::printable(*status.daemon->waiting_for))
                               : std::nullopt);
  } else {
    for (const char* name : {"pid", "version", "started_at", "uptime_seconds", "stopped_at", "waiting_for"}) {
      w.null_field(name);
    }
  }
  w.end_object();
  w.field("nothing_succeeded_yet", nothing_ever_succeeded(status));
  w.key("jobs").begin_array();
  for (const auto& job : status.jobs) {
    w.begin_object();
    w.field("name", job.job);
    w.field("state", job_state(job, status.failing_after));
    w.field("runs", static_cast<std::int64_t>(job.runs));
    w.field("failed_runs", static_cast<std::int64_t>(job.failed_runs));
    w.field("failed_in_a_row", static_cast<std::int64_t>(job.failed_in_a_row));
    w.field("items", static_cast<std::int64_t>(job.items));
    w.field("last_success_at", job.last_success_at);
    w.field("data_as_of", job.data_as_of);
    w.key("last_answer");
    if (job.last_answer_at) {
      w.begin_object().field("at", *job.last_answer_at).field("http_status", job.last_answer_status).end_object();
    } else {
      w.null();
    }
    w.key("last_error");
    if (job.last_error_at) {
      w.begin_object().field("at", *job.last_error_at).field("message", text::printable(job.last_error)).end_object();
    } else {
      w.null();
    }
    w.field("saved_at", job.updated_at);
    w.end_object();
  }
  w.end_array();
  w.key("outbound").begin_object();
  const auto counts = ledger ? ledger->backlog() : std::map<std::pair<LedgerKind, LedgerState>, int>{};
  for (const LedgerKind kind : kKinds) {
    w.key(to_string(kind)).begin_object();
    for (const LedgerState state : kStates) {
      const auto it = counts.find({kind, state});
      w.field(to_string(state), it == counts.end() ? 0 : it->second);
    }
    w.end_object();
  }
  w.end_object();
  w.field("oldest_waiting_since", ledger ? ledger->oldest_waiting_since() : std::nullopt);
  w.field("source_rows_waiting", source_rows_waiting);
  w.key("latest_rejections").begin_array();
  for (const auto& entry : ledger ? ledger->latest(LedgerState::rejected, 10) : std::vector<LedgerEntry>{}) {
    w.begin_object()
        .field("kind", to_string(entry.kind))
        .field("reference_id", text::printable(entry.source_key))
        .field("at", entry.updated_at)
        .field("reason", text::printable(entry.last_error))
        .end_object();
  }
  w.end_array();
  w.key("cancel_mismatches");
  if (const auto rows = cancel_mismatches(results)) {
    w.begin_array();
    for (const auto& row : *rows) {
      w.begin_object()
          .field("reference_id", text::printable(row.reference_id))
          .field("state", row.state)
          .field("remote_id", row.remote_id.value_or(0))
          .field("remote_status", text::printable(row.remote_status.value_or("")))
          .field("sent_again", classify_cancel_mismatch(row) == CancelMismatch::send_again)
          .field("last_error", row.last_error ? std::optional(text::printable(*row.last_error)) : std::nullopt)
          .end_object();
    }
    w.end_array();
  } else {
    w.null();
  }
  w.key("catalog");
  if (catalog) {
    const CatalogBacklog& backlog = catalog->backlog;
    w.begin_object();
    w.field("push_products", catalog->push_products);
    w.field("products", backlog.products);
    w.field("not_created", backlog.not_created);
    w.field("changes_unsent", backlog.changes_unsent);
    w.field("unclear", backlog.unclear);
    w.field("rejected", backlog.rejected);
    w.field("source_problem", backlog.products || !catalog->push_products ? std::nullopt
                                                                           : std::optional(backlog.source_problem));
    w.key("rejections").begin_array();
    for (const CatalogRejection& rejection : backlog.rejections) {
      w.begin_object()
          .field("kind", to_string(rejection.kind))
          .field("reference_id", text::printable(rejection.reference_id));
      w.key("skus").begin_array();
      for (const std::string& sku : rejection.skus) w.value(sku);
      w.end_array();
      w.field("at", rejection.at).field("reason", rejection.reason).end_object();
    }
    w.end_array();
    w.end_object();
  } else {
    w.null();
  }
  w.end_object();
  return w.take() + '\n';
}

}  // namespace fulfillsync::daemon
