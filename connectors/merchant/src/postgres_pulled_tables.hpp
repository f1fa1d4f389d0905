#pragma once
#include <memory>

#include "fulfillsync/merchant/pulled_tables.hpp"
#include "postgres_support.hpp"

namespace fulfillsync::merchant {

// PulledTables in PostgreSQL: the pull side's result tables in the result schema, written by
// ResultPulledTables (result_pulled_tables.cpp), the same statements as SQLite's with `$n` parameters.
std::unique_ptr<PulledTables> make_postgres_pulled_tables(PostgresConnection& connection);

}  // namespace fulfillsync::merchant
