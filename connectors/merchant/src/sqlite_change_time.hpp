#pragma once
// updated_at as an instant in the contract's form (source_rows.hpp, change_time), computed in SQL so
// that read positions compare and order it there: fulfillsync_change_time(value), a function each
// connection registers. It reads what timestamps::parse_iso8601 reads (ISO 8601 with Z or an offset,
// converted to UTC; SQLite's `YYYY-MM-DD HH:MM:SS`), and a value without Z or an offset as a wall
// time in merchant.timezone, which SQLite's own date functions cannot (they know UTC and the
// process's local zone only). Anything else is `~` and the value ("~NULL" for NULL): after every
// time, so it is reported rather than read in a wrong place.
#include <string_view>

namespace SQLite {
class Database;
}

namespace fulfillsync::merchant {

// The expression, on the source table aliased `t`.
inline constexpr std::string_view kChangeTimeSql = "fulfillsync_change_time(t.updated_at)";

// Registers fulfillsync_change_time on `db`, reading naive values in the IANA zone `zone`. Throws
// MerchantDatabaseError when the zone cannot be read.
void register_change_time(SQLite::Database& db, std::string_view zone);

}  // namespace fulfillsync::merchant
