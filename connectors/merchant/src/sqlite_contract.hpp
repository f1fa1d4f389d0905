#pragma once
// The parts of the merchant database contract that the SQLite database and its read-only check
// (sqlite_check.hpp) share.
#include <string>
#include <string_view>
#include <vector>

#include "result_migrations.hpp"

namespace SQLite {
class Database;
}

namespace fulfillsync::merchant {

// Problems with the source tables (a table or column of the contract missing), one line each.
std::vector<std::string> source_contract_problems(SQLite::Database& db);

}  // namespace fulfillsync::merchant
