#pragma once
// The daemon's own SQLite store: pull cursors, the outbound ledger and OAuth tokens
// (schema/checkpoint/). One daemon at a time may hold it.
#include <filesystem>
#include <memory>
#include <stdexcept>

namespace SQLite {
class Database;
}

namespace fulfillsync::daemon {

class CheckpointStoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CheckpointStore {
 public:
  // Opens the store, creating it (mode 0600: it holds tokens) when missing, takes its lock and
  // migrates it to the newest schema. Throws CheckpointStoreError, including for a store written
  // by a newer fulfillsync or held by another running daemon.
  explicit CheckpointStore(const std::filesystem::path& path);
  ~CheckpointStore();
  CheckpointStore(const CheckpointStore&) = delete;
  CheckpointStore& operator=(const CheckpointStore&) = delete;

  const std::filesystem::path& path() const { return path_; }
  int schema_version() const;
  SQLite::Database& database() { return *db_; }

 private:
  std::filesystem::path path_;
  int lock_fd_ = -1;
  std::unique_ptr<SQLite::Database> db_;
};

}  // namespace fulfillsync::daemon
