#include "store/checkpoint_token_store.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include "fulfillsync/common/timestamps.hpp"

namespace fulfillsync::daemon {
namespace {

constexpr const char* kOAuthRow = "oauth";

}  // namespace

std::optional<api::OAuthTokens> CheckpointTokenStore::load() {
  SQLite::Statement query(store_.database(),
                          "SELECT access_token, refresh_token, expires_at FROM tokens WHERE name = ?");
  query.bind(1, kOAuthRow);
  if (!query.executeStep()) return std::nullopt;
  api::OAuthTokens tokens;
  tokens.access_token = query.getColumn(0).getString();
  tokens.refresh_token = query.getColumn(1).getString();
  const auto expires = timestamps::parse_iso8601(query.getColumn(2).getString());
  // An unreadable expiry is treated as expired: the next call refreshes.
  tokens.expires_at = expires.value_or(std::chrono::system_clock::time_point{});
  return tokens;
}

void CheckpointTokenStore::save(const api::OAuthTokens& tokens) {
  SQLite::Statement upsert(store_.database(),
                           "INSERT INTO tokens (name, access_token, refresh_token, expires_at, updated_at) "
                           "VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET access_token = excluded.access_token, "
                           "refresh_token = excluded.refresh_token, expires_at = excluded.expires_at, "
                           "updated_at = excluded.updated_at");
  upsert.bind(1, kOAuthRow);
  upsert.bind(2, tokens.access_token);
  upsert.bind(3, tokens.refresh_token);
  upsert.bind(4, timestamps::format_iso8601_z(tokens.expires_at));
  upsert.bind(5, timestamps::format_iso8601_z(std::chrono::system_clock::now()));
  upsert.exec();  // autocommit under synchronous=FULL: on disk when exec returns
}

}  // namespace fulfillsync::daemon
