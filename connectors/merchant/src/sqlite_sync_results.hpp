#pragma once
#include <array>
#include <memory>

#include "fulfillsync/merchant/sync_results.hpp"
#include "sqlite_support.hpp"

namespace fulfillsync::merchant {

// SyncResults in SQLite: `{prefix}order_sync` and `{prefix}return_sync`.
class SqliteSyncResults final : public SyncResults {
 public:
  explicit SqliteSyncResults(SqliteConnection& connection) : connection_(connection) {}

  void write_results(SourceKind kind, std::span<const SyncResult> results) override;
  std::vector<SyncResult> results_after(SourceKind kind, std::string_view after_reference_id,
                                        std::size_t limit) override;
  std::map<std::string, std::int64_t> count_results_by_state(SourceKind kind) override;
  std::vector<SyncResult> latest_results(SourceKind kind, std::string_view state, std::size_t limit) override;
  std::optional<SyncResult> read_result(SourceKind kind, std::string_view reference_id) override;
  std::vector<SyncResult> cancel_mismatches(std::size_t limit) override;

 private:
  SQLite::Database& db() { return connection_.db(); }

  SqliteConnection& connection_;
  std::array<std::unique_ptr<Upsert>, 3> upserts_;  // of the order, return and product results, once used
};

}  // namespace fulfillsync::merchant
