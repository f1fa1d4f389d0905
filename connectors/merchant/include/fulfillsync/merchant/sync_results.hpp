#pragma once
// What the daemon writes to the result tables in the merchant database ("{prefix}order_sync",
// "{prefix}return_sync"; schema/merchant/README.md): one row per order or return, upserted by
// reference_id, and SyncResults, the face that keeps them.
//
// SyncResults contract for an implementation (failures: database_error.hpp):
// - write_results() upserts by reference_id in one transaction; writing the same results again
//   changes nothing, and a result older than the row's (by updated_at) changes nothing.
// - first_seen_at is set by the first write and never changed.
// - Once a pull has written the provider's status (PulledTables), a later result does not bring the
//   push side's remote_status back.
// The result writer writes; the checkpoint store's rebuild reads results_after(); the other reads
// are for status and for tests.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/common/asio.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/merchant/database_error.hpp"
#include "fulfillsync/merchant/source_rows.hpp"

namespace fulfillsync::merchant {

struct SyncResult {
  std::string reference_id;
  // The ledger state: pending, in_flight, created, rejected, unknown, cancelled, ...
  std::string state;
  std::optional<std::int64_t> remote_id{};
  std::optional<std::string> remote_status{};
  std::optional<std::string> last_error{};  // why it was rejected or failed last
  std::optional<std::string> note{};        // a change the API cannot apply to a created order
  std::int64_t attempts = 0;
  std::optional<std::string> content_hash{};
  // When the state was reached: the ledger's time, so that replaying a write changes nothing.
  timestamps::TimePoint updated_at{};
  std::optional<timestamps::TimePoint> remote_created_at{};
  // Orders only (ignored for returns).
  std::optional<timestamps::TimePoint> cancel_requested_at{}, cancelled_at{};
  // Read back only: set when the row was first written.
  std::optional<timestamps::TimePoint> first_seen_at{};

  friend bool operator==(const SyncResult&, const SyncResult&) = default;
};

class SyncResults {
 public:
  virtual ~SyncResults() = default;

  // Upserts by reference_id, all in one transaction (see above).
  virtual void write_results(SourceKind kind, std::span<const SyncResult> results) = 0;
  // The same, awaited: a database on the other side of a socket (PostgreSQL) leaves the caller's
  // event loop free while it works. By default write_results (SQLite's writes are local).
  virtual boost::asio::awaitable<void> write_results_async(SourceKind kind, std::span<const SyncResult> results) {
    write_results(kind, results);
    co_return;
  }

  // Every result row after `after_reference_id`, in reference_id order, at most `limit`: what a
  // checkpoint store that was lost or restored from an older copy is rebuilt from.
  virtual std::vector<SyncResult> results_after(SourceKind kind, std::string_view after_reference_id,
                                                std::size_t limit) = 0;

  // Rows by state, the latest rows in a state (newest first), and one row.
  virtual std::map<std::string, std::int64_t> count_results_by_state(SourceKind kind) = 0;
  virtual std::vector<SyncResult> latest_results(SourceKind kind, std::string_view state, std::size_t limit) = 0;
  virtual std::optional<SyncResult> read_result(SourceKind kind, std::string_view reference_id) = 0;

  // Orders whose cancel the provider does not show: the merchant's row asks for the cancel
  // (cancel_requested = 1) and the result says `cancel_rejected`, or says `cancelled` while the
  // provider's status, pulled after the cancel, is another. Only created orders (a remote id) whose
  // provider status is known; by reference id, at most `limit`.
  virtual std::vector<SyncResult> cancel_mismatches(std::size_t limit) = 0;
};

}  // namespace fulfillsync::merchant
