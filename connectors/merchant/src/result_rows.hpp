#pragma once
// The result rows of SyncResults (`{prefix}order_sync`, `{prefix}return_sync`) as both merchant
// databases write and read them: which columns, the rules of the upsert, and a row read back.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fulfillsync/merchant/sync_results.hpp"
#include "sql_values.hpp"

namespace fulfillsync::merchant {

// The columns a result is read back from, in result_from_columns()'s order.
std::string result_columns(SourceKind kind);

// A result read back, column i of result_columns() given as text by `text(i)` (nothing for NULL).
SyncResult result_from_columns(SourceKind kind, const std::function<std::optional<std::string>(int)>& text);

// The values written for a result, named by their columns.
std::vector<Named> result_row(SourceKind kind, const SyncResult& result);

// Upserted by reference_id; first_seen_at kept; an older result changes nothing; once a pull owns
// remote_status, a result does not bring the push side's back.
OnConflict result_upsert_rules();

}  // namespace fulfillsync::merchant
