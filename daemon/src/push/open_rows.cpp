#include "push/open_rows.hpp"

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/daemon/mapping/request_mapping.hpp"

namespace fulfillsync::daemon {

RowVersion version_of(const merchant::OpenRowVersion& row) {
  return {row.reference_id, row.change_time, row.content_hash, cancel_requested(row.cancel_requested)};
}
RowVersion version_of(const merchant::OrderRow& row) {
  return {row.reference_id, row.change_time, row.content_hash, cancel_requested(row)};
}
RowVersion version_of(const merchant::ReturnRow& row) {
  return {row.reference_id, row.change_time, row.content_hash, false};
}

LedgerVersions::LedgerVersions(OutboundLedger& ledger, merchant::SourceKind kind, std::span<const std::string> keys,
                               std::string_view starting_point) {
  const bool orders = kind == merchant::SourceKind::orders;
  creates_ = ledger.hashes(orders ? LedgerKind::order_create : LedgerKind::return_create, keys);
  if (orders) cancels_ = ledger.hashes(LedgerKind::order_cancel, keys);
  const auto since = timestamps::parse_iso8601(starting_point);
  floor_ = since ? timestamps::format_iso8601_z(*since) : std::string(starting_point);
}

bool LedgerVersions::lacks(const RowVersion& row) const {
  if (row.change_time < floor_) return false;  // history before the starting point
  const auto create = creates_.find(row.reference_id);
  const bool create_current = create != creates_.end() && create->second == row.content_hash;
  if (create_current) return false;
  return !row.asks_cancel || !cancels_.contains(row.reference_id);
}

OpenRowsPage compare_open_rows(merchant::SourceTables& source, OutboundLedger& ledger, merchant::SourceKind kind,
                               std::string_view starting_point, std::string_view after_key, std::size_t limit) {
  std::vector<merchant::OpenRowVersion> rows = source.open_row_versions(kind, after_key, limit);
  OpenRowsPage page;
  page.compared = rows.size();
  page.more = rows.size() == limit;
  if (rows.empty()) return page;
  page.last_key = rows.back().reference_id;
  std::vector<std::string> keys;
  keys.reserve(rows.size());
  for (const auto& row : rows) keys.push_back(row.reference_id);
  const LedgerVersions in_ledger(ledger, kind, keys, starting_point);
  for (auto& row : rows) {
    if (in_ledger.lacks(version_of(row))) page.lacking.push_back(std::move(row));
  }
  return page;
}

std::int64_t count_open_rows_ledger_lacks(merchant::SourceTables& source, OutboundLedger& ledger,
                                          merchant::SourceKind kind, std::string_view starting_point,
                                          std::size_t page) {
  std::int64_t count = 0;
  std::string after;
  for (bool more = true; more;) {
    const OpenRowsPage compared = compare_open_rows(source, ledger, kind, starting_point, after, page);
    count += static_cast<std::int64_t>(compared.lacking.size());
    after = compared.last_key;
    more = compared.more;
  }
  return count;
}

}  // namespace fulfillsync::daemon
