#include "push/result_writer.hpp"

#include <deque>
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
namespace asio = boost::asio;

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

merchant::SyncResult order_result(const LedgerEntry* create, const LedgerEntry* cancel) {
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

merchant::SyncResult product_result(const LedgerEntry* create, const LedgerEntry* update) {
  assert(create && "an update is queued only once its product is created");
  merchant::SyncResult result = base_result(*create);
  if (!update || create->state != LedgerState::created) return result;
  result.updated_at = std::max(result.updated_at, time_of(update->updated_at));
  result.content_hash = update->content_hash;
  if (!update->note.empty()) result.note = update->note;
  switch (update->state) {
    case LedgerState::applied: break;
    case LedgerState::rejected:
      result.state = "update_rejected";
      result.last_error = text_or_null(update->last_error);
      break;
    case LedgerState::pending:
    case LedgerState::in_flight:
    case LedgerState::unknown: result.state = "updating"; break;
    case LedgerState::created:
    case LedgerState::withdrawn: FULFILLSYNC_INVARIANT(false, "an update is applied, never created or withdrawn"); break;
  }
  return result;
}

ResultWriter::ResultWriter(OutboundLedger& ledger, merchant::SyncResults& results, SyncMetrics& metrics)
    : ledger_(ledger), results_(results), metrics_(metrics) {}

ResultWriter::Unwritten ResultWriter::unwritten(merchant::SourceKind kind, int limit) {
  Unwritten unwritten;
  if (kind == merchant::SourceKind::returns) {
    unwritten.entries = ledger_.unwritten_results(LedgerKind::return_create, limit);
    for (const auto& entry : unwritten.entries) unwritten.results.push_back(return_result(entry));
    return unwritten;
  }
  // Both entries of an order (a product) go into its one row, whichever of them changed.
  const bool products = kind == merchant::SourceKind::products;
  const LedgerKind first_kind = products ? LedgerKind::product_create : LedgerKind::order_create;
  const LedgerKind second_kind = products ? LedgerKind::product_update : LedgerKind::order_cancel;
  unwritten.entries = ledger_.unwritten_results(first_kind, limit);
  const std::size_t firsts = unwritten.entries.size();
  for (auto& entry : ledger_.unwritten_results(second_kind, limit)) unwritten.entries.push_back(std::move(entry));
  // The rows point into `entries`, which no longer grows, and into `looked_up` (a deque: its
  // elements stay where they are).
  std::map<std::string_view, std::pair<const LedgerEntry*, const LedgerEntry*>> rows;
  for (std::size_t i = 0; i < unwritten.entries.size(); ++i) {
    const LedgerEntry& entry = unwritten.entries[i];
    auto& pair = rows[entry.source_key];
    (i < firsts ? pair.first : pair.second) = &entry;
  }
  // Few have the second (a cancel, an update): which do is asked a page of keys at a time.
  std::vector<std::string> without_second;
  for (const auto& [key, entries] : rows) {
    if (!entries.second) without_second.emplace_back(key);
  }
  const auto with_second = ledger_.hashes(second_kind, without_second);
  std::deque<LedgerEntry> looked_up;
  const auto look_up = [&](LedgerKind entry_kind, std::string_view key) -> const LedgerEntry* {
    auto found = ledger_.find(entry_kind, key);
    return found ? &looked_up.emplace_back(std::move(*found)) : nullptr;
  };
  for (auto& [key, entries] : rows) {
    if (!entries.first) entries.first = look_up(first_kind, key);
    if (!entries.second && with_second.contains(key)) entries.second = look_up(second_kind, key);
    unwritten.results.push_back(products ? product_result(entries.first, entries.second)
                                         : order_result(entries.first, entries.second));
  }
  return unwritten;
}

bool ResultWriter::settle(const Unwritten& unwritten, std::string_view job, int limit) {
  failpoint(fmt::format("{}.after_result_write", job));
  // An entry that changed while the write was under way keeps its mark (mark_results_written). Lost
  // to a power cut, the note only has the rows written again: not worth a sync of its own.
  auto batch = ledger_.batch(OutboundLedger::Durability::with_next);
  ledger_.mark_results_written(unwritten.entries);
  batch.commit();
  return static_cast<int>(unwritten.entries.size()) < limit;
}

bool ResultWriter::flush(merchant::SourceKind kind, std::string_view job, int limit) {
  const Unwritten rows = unwritten(kind, limit);
  if (rows.results.empty()) return true;
  try {
    results_.write_results(kind, rows.results);
  } catch (const std::exception& e) {
    metrics_.count_result_write_failure();
    spdlog::warn("{}: writing {} result rows to the merchant database failed ({})", job, rows.results.size(),
                 e.what());
    return false;
  }
  return settle(rows, job, limit);
}

asio::awaitable<bool> ResultWriter::flush_async(merchant::SourceKind kind, std::string_view job, int limit) {
  const Unwritten rows = unwritten(kind, limit);
  if (rows.results.empty()) co_return true;
  try {
    co_await results_.write_results_async(kind, rows.results);
  } catch (const std::exception&) {
    metrics_.count_result_write_failure();
    throw;
  }
  co_return settle(rows, job, limit);
}

asio::awaitable<bool> ResultWriter::announce_sends(merchant::SourceKind kind, std::span<const LedgerEntry> entries,
                                                   std::span<const std::size_t> leaving, std::string_view job) {
  if (leaving.empty()) co_return true;
  std::vector<merchant::SyncResult> results;
  results.reserve(leaving.size());
  for (const std::size_t i : leaving) {
    const LedgerEntry& entry = entries[i];
    if (entry.kind == LedgerKind::product_update) {
      // The product's row says updating, with the version leaving and its time (ProductPushJob sends
      // an update only for a product it has created).
      const auto create = ledger_.find(LedgerKind::product_create, entry.source_key);
      if (!create || create->state != LedgerState::created) continue;
      LedgerEntry leaving_update = entry;
      leaving_update.state = LedgerState::in_flight;
      results.push_back(product_result(&*create, &leaving_update));
      continue;
    }
    merchant::SyncResult result = kind == merchant::SourceKind::orders     ? order_result(&entry, nullptr)
                                  : kind == merchant::SourceKind::products ? product_result(&entry, nullptr)
                                                                           : return_result(entry);
    result.state = std::string(to_string(LedgerState::in_flight));
    results.push_back(std::move(result));
  }
  std::string failure;
  try {
    co_await results_.write_results_async(kind, results);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (failure.empty()) co_return true;
  metrics_.count_result_write_failure();
  spdlog::warn("{}: writing {} result rows as in flight to the merchant database failed ({}); sending them all "
               "the same",
               job, results.size(), failure);
  co_return false;
}

}  // namespace fulfillsync::daemon
