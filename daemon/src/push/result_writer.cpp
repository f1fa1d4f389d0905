#include "push/result_writer.hpp"

#include <map>
#include <string>
#include <vector>

#include <SQLiteCpp/Exception.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/common/invariant.hpp"
#include "fulfillsync/daemon/job/failpoints.hpp"

namespace fulfillsync::daemon {
namespace {

timestamps::TimePoint time_of(const std::string& text) {
  // The ledger writes these itself; an unreadable one is a broken store.
  const auto parsed = timestamps::parse_iso8601(text);
  assert(parsed && "the ledger's timestamps are ISO 8601");
  return parsed.value_or(timestamps::TimePoint{});
}

std::optional<std::string> text_or_null(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return text;
}

merchant::SyncResult base_result(const LedgerEntry& entry) {
  merchant::SyncResult result;
  result.reference_id = entry.source_key;
  result.state = std::string(to_string(entry.state));
  result.remote_id = entry.remote_id;
  result.remote_status = text_or_null(entry.remote_status);
  result.last_error = text_or_null(entry.last_error);
  result.note = text_or_null(entry.note);
  result.attempts = entry.attempts;
  result.content_hash = entry.content_hash;
  result.updated_at = time_of(entry.updated_at);
  if (!entry.remote_created_at.empty()) result.remote_created_at = time_of(entry.remote_created_at);
  return result;
}

}  // namespace

merchant::SyncResult order_result(const std::optional<LedgerEntry>& create, const std::optional<LedgerEntry>& cancel) {
  assert((create || cancel) && "a result needs a ledger entry");
  // A cancel entry exists only once the create was sent, so there is always a create beside it.
  merchant::SyncResult result = base_result(create ? *create : *cancel);
  if (create && create->state == LedgerState::withdrawn) {
    result.state = "cancelled";
    result.note = result.last_error;  // why it was never sent: not an error
    result.last_error.reset();
    result.cancel_requested_at = result.cancelled_at = result.updated_at;
  }
  if (!cancel || !create) return result;
  result.updated_at = std::max(result.updated_at, time_of(cancel->updated_at));
  result.cancel_requested_at = time_of(cancel->created_at);
  switch (cancel->state) {
    case LedgerState::created: FULFILLSYNC_INVARIANT(false, "a cancel is applied, never created"); break;
    case LedgerState::applied:
      result.state = "cancelled";
      result.cancelled_at = time_of(cancel->updated_at);
      if (!cancel->remote_status.empty()) result.remote_status = cancel->remote_status;
      break;
    case LedgerState::rejected:
      result.state = "cancel_rejected";
      result.last_error = text_or_null(cancel->last_error);
      break;
    case LedgerState::withdrawn: break;  // the create was never made; its own state says so
    case LedgerState::pending:
    case LedgerState::in_flight:
    case LedgerState::unknown:
      if (create->state == LedgerState::created) result.state = "cancelling";
      break;
  }
  return result;
}

merchant::SyncResult return_result(const LedgerEntry& create) { return base_result(create); }

ResultWriter::ResultWriter(OutboundLedger& ledger, merchant::SyncResults& results, SyncMetrics& metrics)
    : ledger_(ledger), results_(results), metrics_(metrics) {}

bool ResultWriter::flush(merchant::SourceKind kind, std::string_view job, int limit) {
  std::vector<LedgerEntry> written;
  std::vector<merchant::SyncResult> results;
  if (kind == merchant::SourceKind::returns) {
    written = ledger_.unwritten_results(LedgerKind::return_create, limit);
    for (const auto& entry : written) results.push_back(return_result(entry));
  } else {
    // Both entries of an order go into its one row, whichever of them changed.
    std::map<std::string, std::pair<std::optional<LedgerEntry>, std::optional<LedgerEntry>>> orders;
    for (auto& entry : ledger_.unwritten_results(LedgerKind::order_create, limit)) {
      orders[entry.source_key].first = entry;
      written.push_back(std::move(entry));
    }
    for (auto& entry : ledger_.unwritten_results(LedgerKind::order_cancel, limit)) {
      orders[entry.source_key].second = entry;
      written.push_back(std::move(entry));
    }
    // Few orders have a cancel: which do is asked a page of keys at a time, not an order at a time.
    std::vector<std::string> without_cancel;
    for (const auto& [key, entries] : orders) {
      if (!entries.second) without_cancel.push_back(key);
    }
    const auto cancelled = ledger_.hashes(LedgerKind::order_cancel, without_cancel);
    for (auto& [key, entries] : orders) {
      if (!entries.first) entries.first = ledger_.find(LedgerKind::order_create, key);
      if (!entries.second && cancelled.contains(key)) entries.second = ledger_.find(LedgerKind::order_cancel, key);
      results.push_back(order_result(entries.first, entries.second));
    }
  }
  if (results.empty()) return true;
  try {
    results_.write_results(kind, results);
  } catch (const std::exception& e) {
    metrics_.count_result_write_failure();
    spdlog::warn("{}: writing {} result rows to the merchant database failed ({}); retrying later", job, results.size(),
                 e.what());
    return false;
  }
  failpoint(fmt::format("{}.after_result_write", job));
  // Lost to a power cut, the rows are only written again: not worth a sync of its own.
  auto batch = ledger_.batch(OutboundLedger::Durability::with_next);
  for (const auto& entry : written) ledger_.mark_result_written(entry);
  batch.commit();
  return static_cast<int>(written.size()) < limit;
}

bool ResultWriter::announce_sends(merchant::SourceKind kind, std::span<const LedgerEntry> entries,
                                  std::string_view job) {
  if (entries.empty()) return true;
  std::vector<merchant::SyncResult> results;
  for (const LedgerEntry& entry : entries) {
    merchant::SyncResult result =
        kind == merchant::SourceKind::orders ? order_result(entry, std::nullopt) : return_result(entry);
    result.state = std::string(to_string(LedgerState::in_flight));
    results.push_back(std::move(result));
  }
  try {
    results_.write_results(kind, results);
  } catch (const std::exception& e) {
    metrics_.count_result_write_failure();
    spdlog::warn("{}: writing {} result rows as in flight to the merchant database failed ({}); sending them all "
                 "the same",
                 job, results.size(), e.what());
    return false;
  }
  return true;
}

}  // namespace fulfillsync::daemon
