#pragma once
// A source row's content hash (source_rows.hpp) computed inside SQLite, so that the reconciliation
// sweep compares the open rows with the ledger without reading them with their lines. Functions each
// connection registers build the same canonical serialization (canonical_row.hpp) from the values
// SQLite hands them as content_hash() builds from a row read, so the two hashes are equal:
//   fulfillsync_order_lines(line columns...)    aggregate: the lines, in canonical order, serialized
//   fulfillsync_order_hash(reference_id, columns..., lines)   the hash, lowercase hex
// and fulfillsync_return_lines, fulfillsync_return_hash likewise.
#include <string>
#include <string_view>

#include "fulfillsync/merchant/source_rows.hpp"

namespace SQLite {
class Database;
}

namespace fulfillsync::merchant {

// Registers the four functions on `db`. Throws MerchantDatabaseError when SQLite refuses.
void register_content_hash(SQLite::Database& db);

// A statement of the rows of the source table (aliased `t`) that `rows` selects ("WHERE ... ORDER BY
// ... LIMIT ..."), each as reference_id, change_time (kChangeTimeSql), cancel_requested (NULL for
// returns) and its content hash with its lines, by reference_id.
std::string row_versions_sql(SQLite::Database& db, SourceKind kind, std::string_view rows);

}  // namespace fulfillsync::merchant
