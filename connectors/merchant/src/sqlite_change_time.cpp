#include "sqlite_change_time.hpp"

#include <sqlite3.h>

#include <memory>
#include <string>
#include <string_view>

#include <SQLiteCpp/Database.h>
#include <fmt/format.h>

#include "fulfillsync/common/time_zone.hpp"
#include "fulfillsync/merchant/merchant_database.hpp"
#include "fulfillsync/merchant/source_rows.hpp"

namespace fulfillsync::merchant {
namespace {

// Whether `text` is written exactly as the change time's own form, `YYYY-MM-DDTHH:MM:SS.mmmZ`, each
// field in its range: then it is its own change time once it parses (a real date), and need not
// be written out again. The contract's default for updated_at writes this form, and a catch-up
// read compares every row's change time on every page, so this is the common case by far.
bool in_canonical_form(std::string_view text) {
  constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (text.size() != kShape.size()) return false;
  for (std::size_t i = 0; i < kShape.size(); ++i) {
    if (kShape[i] == 'd' ? (text[i] < '0' || text[i] > '9') : text[i] != kShape[i]) return false;
  }
  const auto two = [&](std::size_t at) { return (text[at] - '0') * 10 + (text[at + 1] - '0'); };
  // Years the clock holds as they are (parse_iso8601 saturates those far out).
  const int century = two(0);
  return century >= 17 && century <= 21 && two(11) <= 23 && two(14) <= 59 && two(17) <= 59;
}

void change_time(sqlite3_context* context, int, sqlite3_value** arguments) {
  const auto& zone = *static_cast<const timestamps::TimeZone*>(sqlite3_user_data(context));
  sqlite3_value* value = arguments[0];
  const int type = sqlite3_value_type(value);
  if (type == SQLITE_TEXT) {
    const auto* bytes = reinterpret_cast<const char*>(sqlite3_value_text(value));
    const std::string_view text(bytes, static_cast<std::size_t>(sqlite3_value_bytes(value)));
    if (in_canonical_form(text) && timestamps::parse_iso8601(text)) {
      sqlite3_result_value(context, value);
      return;
    }
  }
  std::string out(1, kNotATime);
  if (type == SQLITE_NULL) {
    out += "NULL";
  } else {
    const auto* bytes = reinterpret_cast<const char*>(sqlite3_value_text(value));
    const std::string_view text(bytes == nullptr ? "" : bytes, static_cast<std::size_t>(sqlite3_value_bytes(value)));
    const auto when = type == SQLITE_TEXT ? timestamps::parse_iso8601(text, zone) : std::nullopt;
    if (when) {
      out = timestamps::format_iso8601_z(*when);
    } else {
      out += text;
    }
  }
  sqlite3_result_text(context, out.data(), static_cast<int>(out.size()), SQLITE_TRANSIENT);
}

}  // namespace

void register_change_time(SQLite::Database& db, std::string_view zone_name) {
  std::string why;
  auto zone = timestamps::TimeZone::locate(zone_name, why);
  if (!zone) throw MerchantDatabaseError(fmt::format("merchant.timezone: {}", why));
  // The connection owns the zone from here: SQLite deletes it with the function.
  auto owned = std::make_unique<timestamps::TimeZone>(std::move(*zone));
  const int status = sqlite3_create_function_v2(
      db.getHandle(), "fulfillsync_change_time", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY,
      owned.get(), change_time, nullptr, nullptr,
      [](void* data) { delete static_cast<timestamps::TimeZone*>(data); });
  owned.release();  // also on failure: sqlite3_create_function_v2 calls the destructor then
  if (status != SQLITE_OK) {
    throw MerchantDatabaseError(fmt::format("registering fulfillsync_change_time: {}", sqlite3_errstr(status)));
  }
}

}  // namespace fulfillsync::merchant
