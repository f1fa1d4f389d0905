#include "fulfillsync/sandbox/journal.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include "fulfillsync/common/sqlite_migrations.hpp"
#include "fulfillsync/common/crypto.hpp"

namespace fulfillsync::sandbox {
namespace {

constexpr sqlite::Migration kMigrations[] = {
    {1, "journal", R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE journal (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at_ns INTEGER NOT NULL,            -- simulated time of the request
  merchant_id INTEGER NOT NULL,      -- the caller as authenticated then (0: none)
  channel_id INTEGER NOT NULL,
  scopes INTEGER NOT NULL,
  application TEXT NOT NULL,
  method TEXT NOT NULL,
  target TEXT NOT NULL,
  headers TEXT NOT NULL,             -- name:value lines of the headers handlers read
  body BLOB NOT NULL
);
)sql"},
};

// The headers a handler may read; the rest need not be kept.
constexpr std::string_view kKeptHeaders[] = {"service_channel_id", "creationsourceid", "content-type"};

std::string encode_headers(const HttpRequest& request) {
  std::string out;
  for (const auto& [name, value] : request.headers) {
    for (auto kept : kKeptHeaders) {
      if (name == kept) out += name + ":" + value + "\n";
    }
  }
  return out;
}

void decode_headers(std::string_view text, HttpRequest& request) {
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    const auto colon = line.find(':');
    if (colon != std::string_view::npos) {
      request.headers.emplace_back(std::string(line.substr(0, colon)), std::string(line.substr(colon + 1)));
    }
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

}  // namespace

Journal::Journal(const std::string& path)
    : db_(std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE)) {
  db_->exec("PRAGMA journal_mode=WAL");
  db_->exec("PRAGMA synchronous=NORMAL");
  db_->setBusyTimeout(5000);
  sqlite::migrate(*db_, kMigrations, "sandbox_schema_version", path);
}

Journal::~Journal() = default;

std::string Journal::secret() {
  SQLite::Statement read(*db_, "SELECT value FROM meta WHERE key = 'token_secret'");
  if (read.executeStep()) {
    const auto column = read.getColumn(0);
    return std::string(static_cast<const char*>(column.getBlob()), static_cast<std::size_t>(column.getBytes()));
  }
  const std::string secret = crypto::random_bytes(32);
  SQLite::Statement write(*db_, "INSERT INTO meta (key, value) VALUES ('token_secret', ?)");
  write.bind(1, secret.data(), static_cast<int>(secret.size()));
  write.exec();
  return secret;
}

void Journal::append(const JournalEntry& entry) {
  SQLite::Statement insert(*db_,
                           "INSERT INTO journal (at_ns, merchant_id, channel_id, scopes, application, method, target, "
                           "headers, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, static_cast<std::int64_t>(
                     std::chrono::duration_cast<std::chrono::nanoseconds>(entry.at.time_since_epoch()).count()));
  insert.bind(2, entry.principal.merchant_id);
  insert.bind(3, entry.principal.channel_id);
  insert.bind(4, static_cast<std::int64_t>(entry.principal.scopes));
  insert.bind(5, entry.principal.application);
  insert.bind(6, entry.request.method);
  insert.bind(7, entry.request.target);
  insert.bind(8, encode_headers(entry.request));
  insert.bind(9, entry.request.body.data(), static_cast<int>(entry.request.body.size()));
  insert.exec();
}

void Journal::for_each(const std::function<void(const JournalEntry&)>& visit) {
  SQLite::Statement read(*db_,
                         "SELECT at_ns, merchant_id, channel_id, scopes, application, method, target, headers, body "
                         "FROM journal ORDER BY seq");
  while (read.executeStep()) {
    JournalEntry entry;
    entry.at = TimePoint(std::chrono::duration_cast<TimePoint::duration>(
        std::chrono::nanoseconds(read.getColumn(0).getInt64())));
    entry.principal.merchant_id = read.getColumn(1).getInt();
    entry.principal.channel_id = read.getColumn(2).getInt();
    entry.principal.scopes = static_cast<ScopeSet>(read.getColumn(3).getInt64());
    entry.principal.application = read.getColumn(4).getString();
    entry.request.method = read.getColumn(5).getString();
    entry.request.target = read.getColumn(6).getString();
    decode_headers(read.getColumn(7).getString(), entry.request);
    const auto body = read.getColumn(8);
    entry.request.body.assign(static_cast<const char*>(body.getBlob()), static_cast<std::size_t>(body.getBytes()));
    visit(entry);
  }
}

void Journal::clear() { db_->exec("DELETE FROM journal"); }

std::optional<TimePoint> Journal::shown_until() {
  SQLite::Statement read(*db_, "SELECT value FROM meta WHERE key = 'clock_shown_until'");
  if (!read.executeStep()) return std::nullopt;
  return TimePoint(
      std::chrono::duration_cast<TimePoint::duration>(std::chrono::nanoseconds(read.getColumn(0).getInt64())));
}

void Journal::set_shown_until(TimePoint until) {
  SQLite::Statement write(*db_, "INSERT INTO meta (key, value) VALUES ('clock_shown_until', ?) "
                                "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  write.bind(1, static_cast<std::int64_t>(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(until.time_since_epoch()).count()));
  write.exec();
}

}  // namespace fulfillsync::sandbox
