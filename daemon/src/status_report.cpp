#include "fulfillsync/daemon/status_report.hpp"

#include <array>

#include <fmt/format.h>

#include "fulfillsync/common/printable.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/daemon/job_stats.hpp"
#include "fulfillsync/daemon/progress_report.hpp"
#include "fulfillsync/daemon/source_intake.hpp"
#include "fulfillsync/daemon/tracking_mark_ledger.hpp"

namespace fulfillsync::daemon {
namespace {

constexpr std::array kKinds = {LedgerKind::order_create, LedgerKind::order_cancel, LedgerKind::return_create};
constexpr std::array kStates = {LedgerState::pending, LedgerState::in_flight, LedgerState::unknown,
                                LedgerState::created, LedgerState::rejected, LedgerState::withdrawn};

std::string_view noun(LedgerKind kind) {
  switch (kind) {
    case LedgerKind::order_create: return "order";
    case LedgerKind::order_cancel: return "cancel";
    case LedgerKind::return_create: return "return";
  }
  return "order";
}

// Reference ids may be 300 characters long: enough of one to find it, escaped where it is not
// printable (the merchant's text reaches a terminal).
std::string shortened(const std::string& reference) {
  constexpr std::size_t kShown = 40;
  const std::string shown = text::printable(reference);
  if (shown.size() <= kShown) return shown;
  std::size_t cut = kShown - 3;
  while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return shown.substr(0, cut) + "...";
}

}  // namespace

std::string format_summary(OutboundLedger& ledger, int rejections) {
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
  const auto rejected = ledger.latest(LedgerState::rejected, rejections);
  if (!rejected.empty()) {
    out += fmt::format("Latest rejections (newest first; fix the row, or 'fulfillsyncd retry'):\n");
    for (const auto& entry : rejected) {
      out += fmt::format("  {} {} ({}): {}\n", noun(entry.kind), shortened(entry.source_key), entry.updated_at,
                         text::printable(entry.last_error));
    }
  }
  return out;
}

namespace {

// Where the table is read by the change log: its position and the entries after it.
std::optional<std::string> change_log_status(CheckpointStore& store, merchant::SourceKind kind,
                                             merchant::MerchantDatabase* merchant) {
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
  if (merchant != nullptr && merchant->has_change_log()) {
    out += fmt::format("; {} rows changed since, not read yet", merchant->count_rows_changed_after(kind, position));
  }
  return out + '\n';
}

// Source rows at or after the starting point that have no result row (both tables); 0 without the
// merchant database, or when it cannot tell.
std::int64_t rows_without_result(merchant::MerchantDatabase* merchant, const std::optional<std::string>& since) {
  if (merchant == nullptr || !since) return 0;
  const auto instant = timestamps::parse_iso8601(*since);
  const std::string from = instant ? timestamps::format_iso8601_z(*instant) : *since;
  try {
    return merchant->count_without_result(merchant::SourceKind::orders, from) +
           merchant->count_without_result(merchant::SourceKind::returns, from);
  } catch (const merchant::MerchantDatabaseError&) {
    return 0;  // no result tables yet (a first start has not run): nothing to compare
  }
}

}  // namespace

std::string format_status(CheckpointStore& store, OutboundLedger& ledger, merchant::MerchantDatabase* merchant) {
  std::string out;
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
                                            text::printable(cursor->reference_id))
                              : "nothing yet");
    if (merchant != nullptr && since) {
      const merchant::ChangeCursor after = cursor ? std::max(*cursor, merchant::ChangeCursor{*since, ""})
                                                  : merchant::ChangeCursor{*since, ""};
      out += fmt::format("; {} rows changed since, not read yet", merchant->count_changes_after(kind, after));
    }
    out += '\n';
  }
  if (const auto oldest = ledger.oldest_waiting_since()) {
    const auto waiting_since = timestamps::parse_iso8601(*oldest);
    const double age =
        waiting_since ? std::chrono::duration<double>(timestamps::Clock::now() - *waiting_since).count() : 0;
    out += fmt::format("Oldest entry waiting to be sent or looked up: {} ago ({})\n", rough_duration(age), *oldest);
  } else if (const std::int64_t untaken = rows_without_result(merchant, since); untaken > 0) {
    // The ledger is empty, yet rows wait: change detection missed them. Never "nothing waiting".
    out += fmt::format("Nothing in the ledger, but {} source rows changed since the starting point have no result "
                       "yet: change detection has not taken them (the reconciliation sweep sends them within "
                       "merchant.reconcile_interval)\n",
                       untaken);
  } else {
    out += "Nothing waiting to be sent\n";
  }
  out += '\n' + format_summary(ledger);
  out += '\n' + format_pull_side(store);
  return out;
}

std::string format_pull_side(CheckpointStore& store) {
  std::string out;
  const auto now = timestamps::Clock::now();
  const auto ago = [&](const std::optional<std::string>& when) -> std::string {
    const auto at = when ? timestamps::parse_iso8601(*when) : std::nullopt;
    if (!at) return "never";
    return rough_duration(std::chrono::duration<double>(now - *at).count()) + " ago";
  };
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
  out += fmt::format("{:<15}{:>8}{:>8}{:>10}{:>10}  {:<16}{}\n", "", "runs", "failed", "items", "last run",
                     "last success", "lag");
  for (const auto& job : stats) {
    out += fmt::format("{:<15}{:>8}{:>8}{:>10}{:>9.2f}s  {:<16}{}\n", job.job, job.runs, job.failed_runs, job.items,
                       job.last_run_seconds, ago(job.last_success_at),
                       job.data_as_of ? rough_duration(std::chrono::duration<double>(
                                                           now - timestamps::parse_iso8601(*job.data_as_of)
                                                                     .value_or(now))
                                                           .count())
                                      : std::string("-"));
  }
  return out;
}

}  // namespace fulfillsync::daemon
