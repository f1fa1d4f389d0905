#pragma once
#include <memory>

#include "fulfillsync/merchant/pulled_tables.hpp"
#include "sqlite_support.hpp"

namespace fulfillsync::merchant {

// PulledTables in SQLite: the pull side's result tables under the configured prefix, written by
// ResultPulledTables (result_pulled_tables.cpp) with SQLite's statements, each prepared once.
std::unique_ptr<PulledTables> make_sqlite_pulled_tables(SqliteConnection& connection);

}  // namespace fulfillsync::merchant
