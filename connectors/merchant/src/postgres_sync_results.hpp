#pragma once
#include <array>
#include <memory>

#include "fulfillsync/merchant/sync_results.hpp"
#include "postgres_support.hpp"

namespace fulfillsync::merchant {

// SyncResults in PostgreSQL: `{prefix}order_sync` and `{prefix}return_sync` in the result schema,
// written with the rows and rules SQLite writes (result_rows.hpp).
class PostgresSyncResults final : public SyncResults {
 public:
  explicit PostgresSyncResults(PostgresConnection& connection) : connection_(connection) {}

  void write_results(SourceKind kind, std::span<const SyncResult> results) override;
  boost::asio::awaitable<void> write_results_async(SourceKind kind, std::span<const SyncResult> results) override;
  std::vector<SyncResult> results_after(SourceKind kind, std::string_view after_reference_id,
                                        std::size_t limit) override;
  std::map<std::string, std::int64_t> count_results_by_state(SourceKind kind) override;
  std::vector<SyncResult> latest_results(SourceKind kind, std::string_view state, std::size_t limit) override;
  std::optional<SyncResult> read_result(SourceKind kind, std::string_view reference_id) override;
  std::vector<SyncResult> cancel_mismatches(std::size_t limit) override;

 private:
  // The upsert of `kind`'s results, made once: its statements' texts are written once.
  PgUpsert& upsert(SourceKind kind);

  PostgresConnection& connection_;
  std::array<std::unique_ptr<PgUpsert>, 3> upserts_;  // of the order, return and product results, once used
};

// Creates or migrates the result tables (schema/merchant/postgresql/results/, one transaction, the
// result schema created when missing) or, without `manage`, checks that they are at the version this
// daemon writes. Throws MerchantDatabaseError when it cannot, or when they are newer.
void prepare_postgres_result_tables(PostgresConnection& connection, bool manage);
// Their schema version (0 before the first migration).
int postgres_result_schema_version(PostgresConnection& connection);

}  // namespace fulfillsync::merchant
