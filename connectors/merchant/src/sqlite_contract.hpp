#pragma once
// The parts of the merchant database contract that the SQLite database and its read-only check
// (sqlite_check.hpp) share.
#include <string>
#include <string_view>
#include <vector>

#include "result_migrations.hpp"
#include "source_assembly.hpp"

namespace SQLite {
class Database;
}

namespace fulfillsync::merchant {

// Problems with the tables of `contract` (source_contract() or catalog_contract()): a table or
// column missing, one line each naming the table.
std::vector<std::string> contract_problems(SQLite::Database& db, const std::vector<ContractTable>& contract);

// Whether every trigger of schema/merchant/catalog_change_log.sql is there, so that the change log
// sees each change to the catalog.
bool catalog_change_log_installed(SQLite::Database& db);

// Whether `table` (a table or a view) has `column`: an optional column of the contract
// (source_rows.hpp, Column::optional) is read as NULL where it has not.
bool column_exists(SQLite::Database& db, std::string_view table, std::string_view column);

// How a reader selects `column` of the table aliased `alias`: the column, qualified by the alias
// (SQLite reads an unqualified name that matches no column as a string literal), or NULL for an
// optional column the table lacks.
std::string select_column(SQLite::Database& db, std::string_view table, std::string_view alias,
                          std::string_view column, bool optional);

}  // namespace fulfillsync::merchant
