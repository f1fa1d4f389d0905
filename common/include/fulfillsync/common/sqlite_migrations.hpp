#pragma once
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace SQLite {
class Database;
}

namespace fulfillsync::sqlite {

// One numbered schema step. Versions start at 1 and have no gaps.
struct Migration {
  int version;
  std::string_view name;
  std::string_view sql;
};

// The store was written by a newer fulfillsync, or its history disagrees with ours.
class MigrationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Called once before the migrations a database lacks are applied, with its version and the newest:
// rebuilding a large table can take minutes, which a caller may have to announce.
using BeforeMigrating = std::function<void(int from, int to)>;

// Applies, each in its own transaction, every migration newer than the database's version and
// records it in `version_table` (created when missing). Refuses a database whose version is newer
// than the newest migration known. `store` names the database in error messages. Returns the
// version the database is at afterwards.
int migrate(SQLite::Database& db, std::span<const Migration> migrations, std::string_view version_table,
            std::string_view store, const BeforeMigrating& before_migrating = {});

// The version recorded in `version_table`, 0 when the table does not exist.
int schema_version(SQLite::Database& db, std::string_view version_table);

}  // namespace fulfillsync::sqlite
