#pragma once
// The daemon's own SQLite store (schema/checkpoint/, numbered migrations). One daemon at a time may
// hold it. Its tables, and the class in store/ that reads and writes each:
//   cursors          where each source table and pull job stands            CheckpointStore::cursor
//   outbound_ledger  every create and cancel, its body and its state        OutboundLedger
//   tracking_marks   every tracking mark and its state                      TrackingMarkLedger
//   return_progress  the last status seen of each return created            ReturnProgress
//   job_stats        each job's runs, failures, last answer and last error  job_stats.hpp
//   daemon_process   the daemon that last started on it, for `status`       daemon_record.hpp
//   tokens           OAuth tokens                                           CheckpointTokenStore
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fulfillsync/common/sqlite_migrations.hpp"
#include "fulfillsync/common/sqlite_read_only.hpp"
#include "fulfillsync/common/sqlite_statements.hpp"

namespace SQLite {
class Database;
class Statement;
}

namespace fulfillsync::daemon {

// Timestamps in the store are UTC ISO 8601 text with milliseconds, as this SQL writes the present.
inline constexpr const char* kSqlNow = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";
// The modifier that makes `strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?)` the time `ago` before the present.
std::string sql_modifier_ago(std::chrono::milliseconds ago);

class CheckpointStoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The store's file is damaged (PRAGMA quick_check fails, or SQLite finds it malformed or not a
// database). Restarting does not mend it: `fulfillsyncd recover-store` does.
class CheckpointStoreDamaged : public CheckpointStoreError {
 public:
  using CheckpointStoreError::CheckpointStoreError;
};

class CheckpointStore {
 public:
  enum class Access {
    // The daemon: creates the store when missing (mode 0600: it holds tokens), takes its lock and
    // migrates it to the newest schema.
    exclusive,
    // An operator's command (`status`, `retry`) beside a running daemon: no lock, no migration; the
    // store must exist at this version's schema. Writes take SQLite's lock for a moment.
    alongside,
    // `--dry-run`: reads only (SQLITE_OPEN_READONLY), beside a running daemon or none; the store must
    // exist at this version's schema. Leaves the store and its directory as they were.
    read_only,
  };

  // Throws CheckpointStoreError, including for a store written by a newer fulfillsync or (exclusive)
  // held by another running daemon; CheckpointStoreDamaged (exclusive) when its integrity check fails.
  // `before_migrating`: told when an exclusive opening is about to migrate the store (see sqlite::migrate).
  explicit CheckpointStore(const std::filesystem::path& path, Access access = Access::exclusive,
                           const sqlite::BeforeMigrating& before_migrating = {});
  ~CheckpointStore();
  CheckpointStore(const CheckpointStore&) = delete;
  CheckpointStore& operator=(const CheckpointStore&) = delete;

  const std::filesystem::path& path() const { return path_; }
  int schema_version() const;
  SQLite::Database& database() { return *db_; }
  // The statement for `sql`, prepared on first use and reset for reuse (preparing costs more than
  // running the ledgers' statements). A caller that stops stepping a query early resets it.
  SQLite::Statement& prepared(const std::string& sql);

  // PRAGMA data_version: moves with every commit another connection makes to the store (an
  // operator's `retry` beside the daemon), not with this connection's own.
  std::int64_t data_version();

  // What can change a ledger's entries: its own writes, counted in memory by the ledger, and every
  // commit another connection makes (data_version). Equal versions, nothing changed between them.
  // Costs no query but the pragma.
  struct Version {
    std::uint64_t own_writes = 0;
    std::int64_t others = 0;
    friend bool operator==(const Version&, const Version&) = default;
  };
  Version version(std::uint64_t own_writes) { return {.own_writes = own_writes, .others = data_version()}; }

  // Whether commits are synced (synchronous = FULL, the default) or, in WAL mode, written without a
  // sync that the next synced commit makes for them (NORMAL).
  void sync_commits(bool synced);
  // Write transactions committed while commits were synced: once it has grown, every commit made
  // before is on disk. (A statement committed on its own is not counted: a caller waits longer.)
  std::uint64_t synced_commits() const { return synced_commits_; }

  // A write transaction (BEGIN IMMEDIATE) over the cached statements: a commit prepares nothing.
  // Rolled back unless committed.
  class WriteTransaction {
   public:
    explicit WriteTransaction(CheckpointStore& store);
    WriteTransaction(const WriteTransaction&) = delete;
    WriteTransaction& operator=(const WriteTransaction&) = delete;
    void commit();

   private:
    CheckpointStore& store_;
    sqlite::CachedTransaction transaction_;
  };

  // A job's saved position (its own encoding), nothing before its first save.
  std::optional<std::string> cursor(std::string_view job);
  void save_cursor(std::string_view job, std::string_view position);
  // Saves `position` only if the cursor is still `from` (nothing: not saved yet); false when another
  // process moved it meanwhile (`fulfillsyncd resync`), whose position then stands.
  bool advance_cursor(std::string_view job, const std::optional<std::string>& from, std::string_view position);

 private:
  // alongside or read_only
  void open_beside_daemon(Access access);
  // The message of CheckpointStoreDamaged.
  std::string damaged(std::string_view detail) const;

  std::filesystem::path path_;
  int lock_fd_ = -1;
  std::optional<sqlite::SideFileSweep> side_files_;  // read_only; outlives db_
  std::unique_ptr<SQLite::Database> db_;
  sqlite::StatementCache statements_;
  bool commits_synced_ = true;
  std::uint64_t synced_commits_ = 0;
};

}  // namespace fulfillsync::daemon
