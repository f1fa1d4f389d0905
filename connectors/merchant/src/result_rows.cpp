#include "result_rows.hpp"

#include <charconv>

namespace fulfillsync::merchant {
namespace {

std::optional<std::int64_t> as_integer(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  std::int64_t value = 0;
  std::from_chars(text->data(), text->data() + text->size(), value);
  return value;
}

std::optional<timestamps::TimePoint> as_time(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  return timestamps::parse_iso8601(*text);
}

}  // namespace

std::string result_columns(SourceKind kind) {
  std::string columns =
      "reference_id, state, remote_id, remote_status, last_error, note, attempts, content_hash, first_seen_at, "
      "updated_at, remote_created_at";
  if (kind == SourceKind::orders) columns += ", cancel_requested_at, cancelled_at";
  return columns;
}

SyncResult result_from_columns(SourceKind kind, const std::function<std::optional<std::string>(int)>& text) {
  SyncResult result;
  result.reference_id = text(0).value_or("");
  result.state = text(1).value_or("");
  result.remote_id = as_integer(text(2));
  result.remote_status = text(3);
  result.last_error = text(4);
  result.note = text(5);
  result.attempts = as_integer(text(6)).value_or(0);
  result.content_hash = text(7);
  result.first_seen_at = as_time(text(8));
  result.updated_at = as_time(text(9)).value_or(timestamps::TimePoint{});
  result.remote_created_at = as_time(text(10));
  if (kind == SourceKind::orders) {
    result.cancel_requested_at = as_time(text(11));
    result.cancelled_at = as_time(text(12));
  }
  return result;
}

std::vector<Named> result_row(SourceKind kind, const SyncResult& result) {
  std::vector<Named> row = {{"reference_id", result.reference_id},
                            {"state", result.state},
                            {"remote_id", result.remote_id},
                            {"remote_status", result.remote_status},
                            {"last_error", result.last_error},
                            {"note", result.note},
                            {"attempts", result.attempts},
                            {"content_hash", result.content_hash},
                            {"first_seen_at", result.updated_at},
                            {"updated_at", result.updated_at},
                            {"remote_created_at", result.remote_created_at}};
  if (kind == SourceKind::orders) {
    row.push_back({"cancel_requested_at", result.cancel_requested_at});
    row.push_back({"cancelled_at", result.cancelled_at});
  }
  return row;
}

OnConflict result_upsert_rules() {
  return {.key = {"reference_id"},
          .insert_only = {"first_seen_at"},
          // Once a pull has written the provider's status (remote_updated_at), it is newer than what
          // the create or cancel answer said: a later ledger write (a note, a replay) must not bring
          // that back.
          .set = {{"remote_status", "CASE WHEN t.remote_updated_at IS NULL THEN excluded.remote_status ELSE "
                                    "t.remote_status END"}},
          // An older result replayed after a newer one changes nothing.
          .where = "excluded.updated_at >= t.updated_at"};
}

}  // namespace fulfillsync::merchant
