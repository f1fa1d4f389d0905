#pragma once
// Reading a SQLite database without changing anything on disk, for commands that promise to write
// nothing (`--dry-run`).
#include <filesystem>
#include <memory>

namespace SQLite {
class Database;
}

namespace fulfillsync::sqlite {

// The database at `path` opened with SQLITE_OPEN_READONLY: no statement can change it, and a missing
// file is an error, never created. Throws SQLite::Exception.
std::unique_ptr<SQLite::Database> open_read_only(const std::filesystem::path& path);

// A read-only connection to a WAL database that no other connection has open creates the -wal and
// -shm files, and leaves them behind when it closes: it may not checkpoint, and SQLite removes them
// only after a checkpoint. Made before such a connection opens and destroyed after it has closed,
// this removes the side files that were not there before the way SQLite itself does: it opens the
// database once more, with writes refused (PRAGMA query_only), and closes it. That close removes
// them only when no other connection has the database open; otherwise they are in use and stay.
class SideFileSweep {
 public:
  explicit SideFileSweep(std::filesystem::path database);
  ~SideFileSweep();
  SideFileSweep(const SideFileSweep&) = delete;
  SideFileSweep& operator=(const SideFileSweep&) = delete;

 private:
  bool any_side_file() const;

  std::filesystem::path database_;
  // Side files that were there before belong to someone else, and a -wal may hold their commits.
  bool had_side_files_;
};

}  // namespace fulfillsync::sqlite
