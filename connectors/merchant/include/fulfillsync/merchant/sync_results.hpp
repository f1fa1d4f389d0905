#pragma once
// What the daemon writes to the result tables in the merchant database ("{prefix}order_sync",
// "{prefix}return_sync"; schema/merchant/README.md): one row per order or return, upserted by
// reference_id.
#include <cstdint>
#include <optional>
#include <string>

#include "fulfillsync/common/timestamps.hpp"

namespace fulfillsync::merchant {

enum class SourceKind { orders, returns };

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

}  // namespace fulfillsync::merchant
