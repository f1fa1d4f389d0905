#pragma once
// From the merchant's source tables into the outbound ledger: each changed row version becomes a
// ledger entry with the request body built once (or a rejection with its reasons), and the table's
// cursor is saved in the same commit, so a crash repeats reads but never skips a row.
//
// Where the source tables keep a change log (SourceTables::has_change_log), rows are found by the
// database's change order instead of by updated_at, which is then information only: a clock that
// steps back or a timestamp in another form cannot hide a change. The position handled is saved like
// the cursor, and the log entries up to it are deleted, a batch at a time. Changes from before the
// log are read once by updated_at from the saved cursor (or the starting point) on the first start
// with the log; a first start ever reads the log from its end, so history is not pushed.
//
// Behind both, the reconciliation sweep: every `reconcile_interval`, once reading has caught up, poll()
// also compares the open rows with the ledger, a batch per call, by the content hashes the database
// computes (push/open_rows.hpp, the comparison `status` counts with), and reads whole only the rows
// whose version the ledger lacks (a create never sent, a cancel never queued, a change never seen).
// Checked again on the row read, each is offered, logged at warn and counted: change detection missed it.
//
// Orders: a row that asks for a cancel queues a cancel, sent once the create is settled; a create the
// ledger does not know as created is first looked up at the provider by reference (withdrawn when
// absent, adopted when found). A changed version of a row being sent right
// now is held in memory and offered again each poll; the saved cursor stays before it, so a restart
// reads it again.
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "fulfillsync/api/models/api_version.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/daemon/job/sync_metrics.hpp"
#include "fulfillsync/daemon/store/checkpoint_store.hpp"
#include "fulfillsync/daemon/store/outbound_ledger.hpp"
#include "fulfillsync/merchant/change_feed.hpp"
#include "fulfillsync/merchant/pulled_records.hpp"
#include "fulfillsync/merchant/source_tables.hpp"

namespace fulfillsync::daemon {

// Why an order's create (and cancel) entries are withdrawn: the provider, asked by reference, has no such order.
inline constexpr const char* kCancelledBeforeCreation =
    "cancelled at the merchant before it was created (not found at the provider): never sent";
// Why a cancelled order's create is looked up before anything is concluded.
inline constexpr const char* kCancelLooksUpCreate =
    "cancelled at the merchant, and not known here as created: asking the provider by reference";

// The cursors table's encoding of a source cursor.
std::string encode_cursor(const merchant::ChangeCursor& cursor);
std::optional<merchant::ChangeCursor> decode_cursor(std::string_view position);

// Where pushing began: rows with an older updated_at are never pushed. Fixed at the first start
// (sync.orders_since, or that moment) and kept in the checkpoint store.
std::string starting_point(CheckpointStore& store, const std::optional<std::string>& orders_since);
// The same without fixing it: nothing before the first start.
std::optional<std::string> saved_starting_point(CheckpointStore& store);

// What a push job asks of the intake of its source table.
class Intake {
 public:
  virtual ~Intake() = default;
  // Takes up to `max_batches` batches of changed rows. Returns whether more are waiting. Throws
  // MerchantDatabaseError or SQLite::Exception; the next poll then starts again from the saved cursor.
  virtual bool poll(int max_batches) = 0;
  // Reads the rows `keys` again and offers their current versions. For pending creates (found absent
  // at the provider after an unclear send, or waiting long in a backlog while the intake paused):
  // what goes out next is the row as the merchant last wrote it (or its rejection, or its withdrawal
  // when it asks for a cancel), never a body built before a change. Runs inside the caller's ledger
  // Batch. Throws as poll() does.
  virtual void refresh(std::span<const std::string> keys) = 0;
};

template <typename Row>  // merchant::OrderRow or merchant::ReturnRow
class SourceIntake final : public Intake {
 public:
  struct Options {
    typename merchant::ChangeFeed<Row>::Options feed;
    api::ApiVersion version = api::ApiVersion::v2026_07;
    std::string starting_point;  // ISO 8601, UTC
    config::Duration reconcile_interval = std::chrono::hours(1);  // 0: no sweep
    // The SKU map's rows for SKUs (merchant::PulledTables::sku_map): what return lines by SKU are
    // sent as, and whether an order line's reference goes by the product's id. None: no map.
    std::function<merchant::SkuMap(std::span<const std::string>)> sku_map{};
  };

  SourceIntake(merchant::SourceTables& source, CheckpointStore& store, OutboundLedger& ledger, SyncMetrics& metrics,
               Options options);

  bool poll(int max_batches) override;
  void refresh(std::span<const std::string> keys) override;
  // A quiet moment (a poll that finds nothing new, the end of a `once`): deletes the change log's
  // handled entries that a synced commit covers, whether or not a batch of them is due. Failures are
  // logged.
  void tidy();

  // The checkpoint's name for this table's cursor: "source:fulfillsync_orders".
  static std::string cursor_name();
  // The same for the change log position: "changes:fulfillsync_orders". Its value is the position,
  // preceded by "catch-up " while changes from before the log are still read by updated_at.
  static std::string sequence_name();
  // The same for the last reference id handled by that catch-up: "catch-up:fulfillsync_orders".
  static std::string catch_up_name();

 private:
  bool poll_by_time(int max_batches);
  bool poll_by_sequence(int max_batches);
  // One page of the catch-up; returns whether a full page was read (more wait).
  bool catch_up();
  void begin_catch_up();
  void end_catch_up();
  // Offers one batch of rows read (and rows found ahead of the clock) to the ledger, runs `save`
  // (the read position) and commits, all in one ledger batch.
  template <typename Save>
  void offer(const std::vector<Row>& rows, const std::vector<Row>& ahead, Save save);
  // `in_ledger`: false when the batch's lookup found no entry for the row's key, so the ledger is
  // not asked again.
  void take(const Row& row, bool in_ledger = true);
  // Looks up in the SKU map the SKUs `rows` name that this poll has not looked up yet (skus_).
  void look_up_skus(std::span<const Row> rows);
  void save_cursor();
  void save_sequence();
  void prune_change_log();
  bool prune_due() const;
  void notice_clock_step(const Row& row);
  // Reading by updated_at: rows read again by the look-back window or found by the sweep that are
  // new versions older than the read position by more than look_back.
  void notice_rows_behind(const std::vector<Row>& rows, std::string_view found_by);
  // Counts a row of a clock that stepped back, older than `passed`; logs it at warn once per step.
  void clock_stepped_back(const Row& row, timestamps::TimePoint passed, std::string_view what_passed,
                          std::string_view found_by);
  // One batch of the reconciliation sweep; returns whether the pass has more to compare.
  bool sweep();
  merchant::ChangeFeed<Row> make_feed();
  merchant::ChangeCursor starting_cursor() const;  // the starting point, as a cursor
  void start_sequence();

  merchant::SourceTables& source_;
  CheckpointStore& store_;
  OutboundLedger& ledger_;
  SyncMetrics& metrics_;
  Options options_;
  std::unique_ptr<merchant::ChangeFeed<Row>> feed_;
  std::map<std::string, Row, std::less<>> held_;  // by reference id
  // The SKU map as this poll (or refresh) found it, and the SKUs it asked about.
  merchant::SkuMap skus_;
  std::set<std::string, std::less<>> skus_looked_up_;

  // Reading by the change log.
  bool by_sequence_ = false;
  bool catching_up_ = false;                // changes from before the log: read by updated_at first
  // The catch-up: rows after catch_up_from_ in (updated_at, reference_id) order, read by reference_id.
  merchant::ChangeCursor catch_up_from_;
  std::string catch_up_key_;                         // the last reference id handled
  std::optional<std::string> catch_up_held_before_;  // the key before the first page with a row now held
  merchant::ChangeCursor caught_up_through_;         // the latest (updated_at, reference_id) handed out
  std::string sequence_;                    // the position handled
  std::optional<std::string> held_before_;  // the position before the first batch with a row now held
  std::optional<std::uint64_t> counter_;    // change_counter() at the last read of the log
  bool sequence_pending_ = true;            // more log entries wait: read without asking the counter
  bool prune_owed_ = false;                 // handled entries remain in the log
  // The intake's commits are not synced (a power cut only has their rows read again), so the log is
  // pruned only through a position on disk: the last one saved once the store has synced a commit
  // since (CheckpointStore::synced_commits), else the one before.
  std::string saved_position_;
  std::uint64_t synced_commits_at_save_ = 0;
  std::string durable_position_;
  const std::string& position_on_disk();
  std::optional<std::string> pruned_through_;  // every entry up to it deleted
  // Handled entries are deleted in batches, not after each poll (each delete is a write transaction
  // on the merchant database): once kPruneBatch are owed, kPruneEvery after the last delete, or at
  // the first poll that finds nothing new.
  static constexpr std::int64_t kPruneBatch = 1000;
  static constexpr auto kPruneEvery = std::chrono::minutes(1);
  std::int64_t unpruned_ = 0;
  timestamps::TimePoint next_prune_{};
  std::optional<timestamps::TimePoint> newest_change_;  // the latest updated_at read, for clock steps
  std::optional<timestamps::TimePoint> step_reported_;  // what the last clock step logged was older than

  // The reconciliation sweep.
  timestamps::TimePoint next_sweep_{};
  std::string swept_through_;  // the last key compared in this pass
  std::int64_t swept_ = 0, sweep_found_ = 0;
};

extern template class SourceIntake<merchant::OrderRow>;
extern template class SourceIntake<merchant::ReturnRow>;

}  // namespace fulfillsync::daemon
