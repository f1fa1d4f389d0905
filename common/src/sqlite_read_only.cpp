#include "fulfillsync/common/sqlite_read_only.hpp"

#include <system_error>
#include <utility>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <spdlog/spdlog.h>

namespace fulfillsync::sqlite {

std::unique_ptr<SQLite::Database> open_read_only(const std::filesystem::path& path) {
  return std::make_unique<SQLite::Database>(path.string(), SQLite::OPEN_READONLY);
}

SideFileSweep::SideFileSweep(std::filesystem::path database)
    : database_(std::move(database)), had_side_files_(any_side_file()) {}

bool SideFileSweep::any_side_file() const {
  std::error_code error;
  for (const char* suffix : {"-wal", "-shm"}) {
    if (std::filesystem::exists(database_.string() + suffix, error)) return true;
  }
  return false;
}

SideFileSweep::~SideFileSweep() {
  if (had_side_files_ || !any_side_file()) return;
  try {
    SQLite::Database db(database_.string(), SQLite::OPEN_READWRITE);
    db.setBusyTimeout(1000);
    db.exec("PRAGMA query_only = ON");
    // A connection that read nothing has not opened the WAL, and its close would not look at it.
    SQLite::Statement(db, "SELECT count(*) FROM sqlite_master").executeStep();
  } catch (const std::exception& e) {
    spdlog::debug("{}: the -wal and -shm files a read created could not be removed: {}", database_.string(),
                  e.what());
  }
}

}  // namespace fulfillsync::sqlite
