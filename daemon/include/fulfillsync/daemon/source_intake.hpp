#pragma once
// From the merchant's source tables into the outbound ledger: each changed row version becomes a
// ledger entry with the request body built once (or a rejection with its reasons), and the table's
// cursor is saved in the same commit, so a crash repeats reads but never skips a row.
//
// Orders: a row that asks for a cancel withdraws its create when that was never sent, and queues a
// cancel otherwise (sent once the create is settled). A changed version of a row being sent right
// now is held in memory and offered again each poll; the saved cursor stays before it, so a restart
// reads it again.
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "fulfillsync/api/models/api_version.hpp"
#include "fulfillsync/daemon/checkpoint_store.hpp"
#include "fulfillsync/daemon/outbound_ledger.hpp"
#include "fulfillsync/daemon/sync_metrics.hpp"
#include "fulfillsync/merchant/change_feed.hpp"
#include "fulfillsync/merchant/merchant_database.hpp"

namespace fulfillsync::daemon {

// Why an order's create (and cancel) entries are withdrawn.
inline constexpr const char* kCancelledBeforeCreation = "cancelled at the merchant before it was created: never sent";

// The cursors table's encoding of a source cursor.
std::string encode_cursor(const merchant::ChangeCursor& cursor);
std::optional<merchant::ChangeCursor> decode_cursor(std::string_view position);

// Where pushing began: rows with an older updated_at are never pushed. Fixed at the first start
// (sync.orders_since, or that moment) and kept in the checkpoint store.
std::string starting_point(CheckpointStore& store, const std::optional<std::string>& orders_since);
// The same without fixing it: nothing before the first start.
std::optional<std::string> saved_starting_point(CheckpointStore& store);

template <typename Row>  // merchant::OrderRow or merchant::ReturnRow
class SourceIntake {
 public:
  struct Options {
    typename merchant::ChangeFeed<Row>::Options feed;
    api::ApiVersion version = api::ApiVersion::v2026_07;
    std::string starting_point;  // ISO 8601, UTC
  };

  SourceIntake(merchant::MerchantDatabase& db, CheckpointStore& store, OutboundLedger& ledger, SyncMetrics& metrics,
               Options options);

  // Takes up to `max_batches` batches of changed rows. Returns whether more are waiting. Throws
  // MerchantDatabaseError or SQLite::Exception; the next poll then starts again from the saved cursor.
  bool poll(int max_batches);

  // Reads the rows `keys` again and offers their current versions. For pending creates (found absent
  // at the provider after an unclear send, or waiting long in a backlog while the intake paused):
  // what goes out next is the row as the merchant last wrote it (or its rejection, or its withdrawal
  // when it asks for a cancel), never a body built before a change. Runs inside the caller's ledger
  // Batch. Throws as poll() does.
  void refresh(std::span<const std::string> keys);

  // The checkpoint's name for this table's cursor: "source:fulfillsync_orders".
  static std::string cursor_name();

 private:
  void take(const Row& row);
  void save_cursor();
  merchant::ChangeFeed<Row> make_feed();

  merchant::MerchantDatabase& db_;
  CheckpointStore& store_;
  OutboundLedger& ledger_;
  SyncMetrics& metrics_;
  Options options_;
  std::unique_ptr<merchant::ChangeFeed<Row>> feed_;
  std::map<std::string, Row, std::less<>> held_;  // by reference id
};

extern template class SourceIntake<merchant::OrderRow>;
extern template class SourceIntake<merchant::ReturnRow>;

}  // namespace fulfillsync::daemon
