#include "fulfillsync/daemon/store/outbound_ledger.hpp"

#include "fulfillsync/common/invariant.hpp"
#include "fulfillsync/common/sql_pages.hpp"

#include <algorithm>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

namespace fulfillsync::daemon {
namespace {

LedgerState state_from(std::string_view text) {
  if (text == "pending") return LedgerState::pending;
  if (text == "in_flight") return LedgerState::in_flight;
  if (text == "created") return LedgerState::created;
  if (text == "applied") return LedgerState::applied;
  if (text == "rejected") return LedgerState::rejected;
  if (text == "unknown") return LedgerState::unknown;
  if (text == "withdrawn") return LedgerState::withdrawn;
  FULFILLSYNC_UNREACHABLE("the schema's CHECK allows no other ledger state");
}

LedgerKind kind_from(std::string_view text) {
  if (text == "order_create") return LedgerKind::order_create;
  if (text == "order_cancel") return LedgerKind::order_cancel;
  if (text == "return_create") return LedgerKind::return_create;
  if (text == "product_create") return LedgerKind::product_create;
  if (text == "product_update") return LedgerKind::product_update;
  FULFILLSYNC_UNREACHABLE("the schema's CHECK allows no other ledger kind");
}

constexpr const char* kColumns =
    "kind, source_key, content_hash, state, attempts, body, remote_id, coalesce(remote_status, ''), "
    "coalesce(last_error, ''), coalesce(note, ''), result_pending, created_at, updated_at, "
    "coalesce(remote_created_at, ''), coalesce(sent_at, ''), coalesce(read_at, updated_at)";

// The same, the body left empty: what a result row is made of.
constexpr const char* kColumnsButBody =
    "kind, source_key, content_hash, state, attempts, '', remote_id, coalesce(remote_status, ''), "
    "coalesce(last_error, ''), coalesce(note, ''), result_pending, created_at, updated_at, "
    "coalesce(remote_created_at, ''), coalesce(sent_at, ''), coalesce(read_at, updated_at)";

LedgerEntry entry_from(SQLite::Statement& row) {
  LedgerEntry entry;
  entry.kind = kind_from(row.getColumn(0).getString());
  entry.source_key = row.getColumn(1).getString();
  entry.content_hash = row.getColumn(2).getString();
  entry.state = state_from(row.getColumn(3).getString());
  entry.attempts = row.getColumn(4).getInt();
  entry.body = row.getColumn(5).getString();
  if (!row.getColumn(6).isNull()) entry.remote_id = row.getColumn(6).getInt64();
  entry.remote_status = row.getColumn(7).getString();
  entry.last_error = row.getColumn(8).getString();
  entry.note = row.getColumn(9).getString();
  entry.result_pending = row.getColumn(10).getInt() != 0;
  entry.created_at = row.getColumn(11).getString();
  entry.updated_at = row.getColumn(12).getString();
  entry.remote_created_at = row.getColumn(13).getString();
  entry.sent_at = row.getColumn(14).getString();
  entry.read_at = row.getColumn(15).getString();
  return entry;
}

// A page moved must move every entry of it: one in another state means two writers or a logic error,
// and carrying on could send an order twice.
void check_moved(int changed, std::size_t page, LedgerKind kind, LedgerState to) {
  FULFILLSYNC_INVARIANT(changed == static_cast<int>(page),
                        fmt::format("outbound ledger: {} of {} {} entries cannot move to {}",
                                    page - static_cast<std::size_t>(changed), page, to_string(kind), to_string(to)));
}

// Binds a borrowed text as TEXT: SQLiteCpp binds a pointer and a size as a BLOB, which equals no text.
void bind_text(SQLite::Statement& statement, int index, std::string_view text) {
  statement.bind(index, std::string(text));
}

}  // namespace

std::string_view to_string(LedgerKind kind) {
  switch (kind) {
    case LedgerKind::order_create: return "order_create";
    case LedgerKind::order_cancel: return "order_cancel";
    case LedgerKind::return_create: return "return_create";
    case LedgerKind::product_create: return "product_create";
    case LedgerKind::product_update: return "product_update";
  }
  return "order_create";
}

std::string_view to_string(LedgerState state) {
  switch (state) {
    case LedgerState::pending: return "pending";
    case LedgerState::in_flight: return "in_flight";
    case LedgerState::created: return "created";
    case LedgerState::applied: return "applied";
    case LedgerState::rejected: return "rejected";
    case LedgerState::unknown: return "unknown";
    case LedgerState::withdrawn: return "withdrawn";
  }
  return "pending";
}

OutboundLedger::OutboundLedger(CheckpointStore& store) : store_(store) {}

OutboundLedger::Batch::Batch(OutboundLedger& ledger, Durability durability)
    : synchronous_(ledger.store_, durability), transaction_(ledger.store_) {}

// In WAL mode NORMAL writes the commit without syncing it; the next FULL commit's sync covers it (a
// power loss before that ends the WAL before it, as if it had not been made).
OutboundLedger::Batch::Synchronous::Synchronous(CheckpointStore& checkpoint, Durability durability)
    : store(checkpoint), deferred(durability == Durability::with_next) {
  if (deferred) store.sync_commits(false);
}

OutboundLedger::Batch::Synchronous::~Synchronous() {
  if (!deferred) return;
  bool synced_again = true;
  try {
    store.sync_commits(true);
  } catch (const SQLite::Exception&) {
    synced_again = false;
  }
  // Carrying on would send with marks that are not on disk.
  FULFILLSYNC_INVARIANT(synced_again, "checkpoint store: commits cannot be made synchronous again");
}

void OutboundLedger::Batch::commit() { transaction_.commit(); }

int OutboundLedger::recover_interrupted() {
  changed_all();
  return store_.database().exec(fmt::format(
      "UPDATE outbound_ledger SET state = 'unknown', last_error = 'interrupted while in flight', result_pending = 1 "
      "WHERE state = 'in_flight'"));
}

std::optional<LedgerEntry> OutboundLedger::find(LedgerKind kind, std::string_view source_key) {
  // Statement texts are built once: a push looks entries up several times per row it sends.
  static const std::string sql = fmt::format("SELECT {} FROM outbound_ledger WHERE kind = ? AND source_key = ?", kColumns);
  SQLite::Statement& query = store_.prepared(sql);
  query.bind(1, std::string(to_string(kind)));
  query.bind(2, std::string(source_key));
  if (!query.executeStep()) return std::nullopt;
  LedgerEntry entry = entry_from(query);
  query.reset();  // a statement left on a row would hold its read snapshot
  return entry;
}

std::map<std::string, std::string, std::less<>> OutboundLedger::hashes(LedgerKind kind,
                                                                       std::span<const std::string> source_keys) {
  std::map<std::string, std::string, std::less<>> found;
  for (auto& [key, held] : held_versions(kind, source_keys)) found.emplace(key, std::move(held.content_hash));
  return found;
}

std::map<std::string, OutboundLedger::HeldVersion, std::less<>> OutboundLedger::held_versions(
    LedgerKind kind, std::span<const std::string> source_keys) {
  // A page of keys per statement, not one statement per key.
  static const sql::PagedStatement paged(kKeysPerHashLookup, [](std::size_t keys) {
    return "SELECT source_key, content_hash, state FROM outbound_ledger WHERE kind = ?1 AND source_key IN " +
           sql::parameter_rows(1, keys, 2);
  });
  std::map<std::string, HeldVersion, std::less<>> found;
  paged.for_each_page(source_keys, [&](std::span<const std::string> page, const std::string& sql) {
    SQLite::Statement& query = store_.prepared(sql);
    query.bind(1, std::string(to_string(kind)));
    for (std::size_t i = 0; i < page.size(); ++i) query.bind(static_cast<int>(i + 2), page[i]);
    while (query.executeStep()) {
      found.emplace(query.getColumn(0).getString(),
                    HeldVersion{query.getColumn(1).getString(), state_from(query.getColumn(2).getString())});
    }
  });
  return found;
}

Offer OutboundLedger::offer(LedgerKind kind, std::string_view source_key, std::string_view content_hash,
                            std::string_view body) {
  return offer(kind, source_key, content_hash, body, find(kind, source_key));
}

Offer OutboundLedger::offer(LedgerKind kind, std::string_view source_key, std::string_view content_hash,
                            std::string_view body, const std::optional<LedgerEntry>& existing) {
  // Read and write without a transaction of its own: one daemon thread writes the ledger, and a
  // caller's Batch makes many offers one commit.
  Offer result = Offer::queued;
  if (!existing || existing->content_hash != content_hash) changed(kind);
  if (!existing) {
    static const std::string sql = fmt::format("INSERT INTO outbound_ledger (kind, source_key, content_hash, state, "
                                               "body, created_at, updated_at, read_at) "
                                               "VALUES (?, ?, ?, 'pending', ?, {0}, {0}, {0})",
                                               kSqlNow);
    SQLite::Statement& insert = store_.prepared(sql);
    insert.bind(1, std::string(to_string(kind)));
    insert.bind(2, std::string(source_key));
    insert.bind(3, std::string(content_hash));
    insert.bind(4, body.data(), static_cast<int>(body.size()));
    insert.exec();
  } else if (existing->content_hash == content_hash) {
    result = Offer::unchanged;
  } else if (existing->state == LedgerState::pending || existing->state == LedgerState::rejected ||
             existing->state == LedgerState::withdrawn ||
             (sends_each_version(kind) && existing->state == done_state(kind))) {
    // Fixing a rejected row is how a merchant gets it sent: the new version starts afresh.
    static const std::string sql = fmt::format("UPDATE outbound_ledger SET content_hash = ?, body = ?, state = "
                                               "'pending', attempts = 0, last_error = NULL, result_pending = 1, "
                                               "updated_at = {0}, read_at = {0} WHERE kind = ? AND source_key = ?",
                                               kSqlNow);
    SQLite::Statement& update = store_.prepared(sql);
    update.bind(1, std::string(content_hash));
    update.bind(2, body.data(), static_cast<int>(body.size()));
    update.bind(3, std::string(to_string(kind)));
    update.bind(4, std::string(source_key));
    update.exec();
  } else if (existing->state == done_state(kind)) {
    // The body stays what was sent; the version is recorded so that re-reads of it stay quiet.
    SQLite::Statement& update = store_.prepared(
        fmt::format("UPDATE outbound_ledger SET content_hash = ?, note = ?, result_pending = 1, updated_at = {} "
                    "WHERE kind = ? AND source_key = ?",
                    kSqlNow));
    update.bind(1, std::string(content_hash));
    update.bind(2, std::string(kChangedAfterSending));
    update.bind(3, std::string(to_string(kind)));
    update.bind(4, std::string(source_key));
    update.exec();
    result = Offer::already_sent;
  } else {
    result = Offer::held;
  }
  return result;
}

void OutboundLedger::transition(LedgerKind kind, std::string_view source_key, std::initializer_list<LedgerState> from,
                                LedgerState to, std::optional<std::int64_t> remote_id,
                                std::optional<std::string_view> remote_status, std::optional<std::string_view> error,
                                std::optional<std::string_view> remote_created_at) {
  // The statement's text depends only on `from`: built once per set of states, not per call.
  unsigned from_set = 0;
  for (const LedgerState state : from) from_set |= 1u << static_cast<unsigned>(state);
  std::string& sql = transition_sql_[from_set];
  if (sql.empty()) {
    std::string allowed;
    for (const LedgerState state : from) allowed += fmt::format("{}'{}'", allowed.empty() ? "" : ", ", to_string(state));
    sql = fmt::format(
        "UPDATE outbound_ledger SET state = ?, remote_id = coalesce(?, remote_id), "
        "remote_status = coalesce(?, remote_status), last_error = ?, result_pending = 1, "
        "remote_created_at = coalesce(?, remote_created_at), updated_at = {0} "
        "WHERE kind = ? AND source_key = ? AND state IN ({1})",
        kSqlNow, allowed);
  }
  changed(kind);
  SQLite::Statement& update = store_.prepared(sql);
  update.bind(1, std::string(to_string(to)));
  if (remote_id) update.bind(2, *remote_id);
  else update.bind(2);
  if (remote_status) update.bind(3, std::string(*remote_status));
  else update.bind(3);
  if (error) update.bind(4, std::string(*error));
  else update.bind(4);
  if (remote_created_at && !remote_created_at->empty()) update.bind(5, std::string(*remote_created_at));
  else update.bind(5);
  update.bind(6, std::string(to_string(kind)));
  update.bind(7, std::string(source_key));
  const int changed = update.exec();
  // The jobs only move rows they have just read in `from`; anything else means two writers or a
  // logic error, and carrying on could send an order twice.
  FULFILLSYNC_INVARIANT(changed == 1, fmt::format("outbound ledger: {} {} cannot move to {}", to_string(kind),
                                                   source_key, to_string(to)));
}

void OutboundLedger::mark_in_flight(LedgerKind kind, std::span<const std::string_view> source_keys) {
  // A page of keys a statement. `+state`: found by their keys, not by the state's index (which would
  // walk every pending entry of the kind). The result is not made unwritten: the create job announces
  // its sends itself.
  static const sql::PagedStatement paged(kRowsPerStatement, [](std::size_t keys) {
    return fmt::format(
        "UPDATE outbound_ledger SET state = 'in_flight', attempts = attempts + 1, last_error = NULL, "
        "updated_at = {0}, sent_at = {0} WHERE kind = ?1 AND +state = 'pending' AND source_key IN {1}",
        kSqlNow, sql::parameter_rows(1, keys, 2));
  });
  changed(kind);
  paged.for_each_page(source_keys, [&](std::span<const std::string_view> page, const std::string& sql) {
    SQLite::Statement& update = store_.prepared(sql);
    update.bind(1, std::string(to_string(kind)));
    for (std::size_t i = 0; i < page.size(); ++i) bind_text(update, static_cast<int>(i + 2), page[i]);
    check_moved(update.exec(), page.size(), kind, LedgerState::in_flight);
  });
}

void OutboundLedger::mark_in_flight(LedgerKind kind, std::string_view source_key) {
  mark_in_flight(kind, std::span(&source_key, 1));
}

void OutboundLedger::mark_created(LedgerKind kind, std::span<const Created> created) {
  FULFILLSYNC_INVARIANT(done_state(kind) == LedgerState::created,
                        "a cancel is applied, not created (and so is a product's update)");
  // As transition() to created, a page of answers a statement. From unknown too: reconciliation found
  // the order at the provider and adopts its id. `+state`: found by their keys, not by the state's index.
  static const sql::PagedStatement paged(kRowsPerStatement, [](std::size_t rows) {
    return fmt::format(
        "WITH answer (source_key, remote_id, remote_status, remote_created_at) AS (VALUES {1}) "
        "UPDATE outbound_ledger SET state = 'created', remote_id = answer.remote_id, "
        "remote_status = answer.remote_status, last_error = NULL, result_pending = 1, "
        "remote_created_at = coalesce(nullif(answer.remote_created_at, ''), outbound_ledger.remote_created_at), "
        "updated_at = {0} FROM answer WHERE outbound_ledger.kind = ?1 AND outbound_ledger.source_key = "
        "answer.source_key AND +outbound_ledger.state IN ('in_flight', 'unknown')",
        kSqlNow, sql::parameter_rows(rows, 4, 2));
  });
  changed(kind);
  paged.for_each_page(created, [&](std::span<const Created> page, const std::string& sql) {
    SQLite::Statement& update = store_.prepared(sql);
    update.bind(1, std::string(to_string(kind)));
    for (std::size_t i = 0; i < page.size(); ++i) {
      const auto at = static_cast<int>(2 + i * 4);
      bind_text(update, at, page[i].source_key);
      update.bind(at + 1, page[i].remote_id);
      bind_text(update, at + 2, page[i].remote_status);
      bind_text(update, at + 3, page[i].remote_created_at);
    }
    check_moved(update.exec(), page.size(), kind, LedgerState::created);
  });
}

void OutboundLedger::mark_created(LedgerKind kind, std::string_view source_key, std::int64_t remote_id,
                                  std::string_view remote_status, std::string_view remote_created_at) {
  const Created created{source_key, remote_id, remote_status, remote_created_at};
  mark_created(kind, std::span(&created, 1));
}

void OutboundLedger::mark_applied(std::string_view source_key, std::int64_t remote_id,
                                  std::string_view remote_status) {
  mark_applied(LedgerKind::order_cancel, source_key, remote_id, remote_status);
}

void OutboundLedger::mark_applied(LedgerKind kind, std::string_view source_key, std::int64_t remote_id,
                                  std::string_view remote_status) {
  FULFILLSYNC_INVARIANT(done_state(kind) == LedgerState::applied, "a create is created, not applied");
  // From unknown too: reconciliation found the order cancelled at the provider.
  transition(kind, source_key, {LedgerState::in_flight, LedgerState::unknown}, LedgerState::applied, remote_id,
             remote_status, std::nullopt, std::nullopt);
}

void OutboundLedger::mark_rejected(LedgerKind kind, std::string_view source_key, std::string_view reason) {
  transition(kind, source_key, {LedgerState::in_flight, LedgerState::pending}, LedgerState::rejected, std::nullopt,
             std::nullopt, reason);
}

void OutboundLedger::mark_unknown(LedgerKind kind, std::string_view source_key, std::string_view reason) {
  transition(kind, source_key, {LedgerState::in_flight}, LedgerState::unknown, std::nullopt, std::nullopt, reason);
}

void OutboundLedger::mark_pending(LedgerKind kind, std::string_view source_key, std::string_view reason) {
  transition(kind, source_key, {LedgerState::in_flight, LedgerState::unknown}, LedgerState::pending, std::nullopt,
             std::nullopt, reason);
}

bool OutboundLedger::reopen_cancel(std::string_view source_key, std::string_view reason) {
  const auto cancel = find(LedgerKind::order_cancel, source_key);
  if (!cancel || cancel->state != LedgerState::applied) return false;
  transition(LedgerKind::order_cancel, source_key, {LedgerState::applied}, LedgerState::pending, std::nullopt,
             std::nullopt, reason);
  return true;
}

bool OutboundLedger::queue_cancel(std::string_view source_key, std::string_view content_hash,
                                  std::string_view reason) {
  const auto cancel = find(LedgerKind::order_cancel, source_key);
  if (cancel && cancel->state != LedgerState::withdrawn) return false;
  return put(LedgerKind::order_cancel, source_key, content_hash, LedgerState::pending, std::nullopt, "", reason, "",
             "");
}

void OutboundLedger::withdraw(LedgerKind kind, std::string_view source_key, std::string_view content_hash,
                              std::string_view reason) {
  changed(kind);
  const auto existing = find(kind, source_key);
  if (!existing) {
    SQLite::Statement& insert =
        store_.prepared(fmt::format("INSERT INTO outbound_ledger (kind, source_key, content_hash, state, last_error, "
                                    "created_at, updated_at) VALUES (?, ?, ?, 'withdrawn', ?, {0}, {0})",
                                    kSqlNow));
    insert.bind(1, std::string(to_string(kind)));
    insert.bind(2, std::string(source_key));
    insert.bind(3, std::string(content_hash));
    insert.bind(4, std::string(reason));
    insert.exec();
    return;
  }
  transition(kind, source_key,
             {LedgerState::pending, LedgerState::rejected, LedgerState::unknown, LedgerState::withdrawn},
             LedgerState::withdrawn, std::nullopt, std::nullopt, reason);
  SQLite::Statement& update =
      store_.prepared("UPDATE outbound_ledger SET content_hash = ? WHERE kind = ? AND source_key = ?");
  update.bind(1, std::string(content_hash));
  update.bind(2, std::string(to_string(kind)));
  update.bind(3, std::string(source_key));
  update.exec();
}

std::vector<LedgerEntry> OutboundLedger::in_state(LedgerKind kind, LedgerState state, int limit) {
  static const std::string sql = fmt::format(
      "SELECT {} FROM outbound_ledger WHERE kind = ? AND state = ? ORDER BY updated_at, source_key LIMIT ?", kColumns);
  SQLite::Statement& query = store_.prepared(sql);
  query.bind(1, std::string(to_string(kind)));
  query.bind(2, std::string(to_string(state)));
  query.bind(3, limit);
  std::vector<LedgerEntry> entries;
  while (query.executeStep()) entries.push_back(entry_from(query));
  return entries;
}

bool OutboundLedger::put(LedgerKind kind, std::string_view source_key, std::string_view content_hash,
                         LedgerState state, std::optional<std::int64_t> remote_id, std::string_view remote_status,
                         std::string_view error, std::string_view remote_created_at, std::string_view note) {
  changed(kind);
  SQLite::Statement& upsert = store_.prepared(fmt::format(
      "INSERT INTO outbound_ledger (kind, source_key, content_hash, state, remote_id, remote_status, last_error, "
      "remote_created_at, note, result_pending, created_at, updated_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, nullif(?6, ''), nullif(?7, ''), nullif(?8, ''), nullif(?9, ''), 1, {0}, {0}) "
      "ON CONFLICT (kind, source_key) DO UPDATE SET content_hash = excluded.content_hash, state = excluded.state, "
      "remote_id = excluded.remote_id, remote_status = excluded.remote_status, last_error = excluded.last_error, "
      "remote_created_at = excluded.remote_created_at, note = excluded.note, result_pending = 1, "
      "updated_at = excluded.updated_at WHERE state NOT IN ('created', 'applied', 'in_flight')",
      kSqlNow));
  upsert.bind(1, std::string(to_string(kind)));
  upsert.bind(2, std::string(source_key));
  upsert.bind(3, std::string(content_hash));
  upsert.bind(4, std::string(to_string(state)));
  if (remote_id) upsert.bind(5, *remote_id);
  else upsert.bind(5);
  upsert.bind(6, std::string(remote_status));
  upsert.bind(7, std::string(error));
  upsert.bind(8, std::string(remote_created_at));
  upsert.bind(9, std::string(note));
  return upsert.exec() == 1;
}

void OutboundLedger::look_up_first(LedgerKind kind, std::string_view source_key, std::string_view content_hash,
                                   std::string_view reason, std::string_view note,
                                   const std::optional<std::string>& sent_elsewhere_at) {
  const auto existing = find(kind, source_key);
  FULFILLSYNC_INVARIANT(!existing || existing->state == LedgerState::pending ||
                            existing->state == LedgerState::rejected,
                        fmt::format("outbound ledger: {} {} cannot be looked up from {}", to_string(kind), source_key,
                                    existing ? to_string(existing->state) : "nothing"));
  put(kind, source_key, content_hash, LedgerState::unknown, std::nullopt, "", reason, "", note);
  if (existing && existing->content_hash != content_hash && !existing->body.empty()) {
    // The body was built from another version: found absent, the row's current one is built anew.
    SQLite::Statement& update =
        store_.prepared("UPDATE outbound_ledger SET body = NULL WHERE kind = ? AND source_key = ?");
    update.bind(1, std::string(to_string(kind)));
    update.bind(2, std::string(source_key));
    update.exec();
  }
  if (sent_elsewhere_at) {
    SQLite::Statement& update =
        store_.prepared("UPDATE outbound_ledger SET sent_at = ? WHERE kind = ? AND source_key = ?");
    update.bind(1, *sent_elsewhere_at);
    update.bind(2, std::string(to_string(kind)));
    update.bind(3, std::string(source_key));
    update.exec();
  }
}

bool OutboundLedger::adopt(LedgerKind kind, std::string_view source_key, std::string_view content_hash,
                           std::int64_t remote_id, std::string_view remote_status, std::string_view remote_created_at,
                           std::string_view note, std::optional<std::string_view> body) {
  if (!put(kind, source_key, content_hash, done_state(kind), remote_id, remote_status, "", remote_created_at, note)) {
    return false;
  }
  if (body) {
    SQLite::Statement& update =
        store_.prepared("UPDATE outbound_ledger SET body = nullif(?, '') WHERE kind = ? AND source_key = ?");
    update.bind(1, std::string(*body));
    update.bind(2, std::string(to_string(kind)));
    update.bind(3, std::string(source_key));
    update.exec();
  }
  return true;
}

void OutboundLedger::note_read(LedgerKind kind, std::string_view source_key) {
  SQLite::Statement& update = store_.prepared(
      fmt::format("UPDATE outbound_ledger SET read_at = {} WHERE kind = ? AND source_key = ?", kSqlNow));
  update.bind(1, std::string(to_string(kind)));
  update.bind(2, std::string(source_key));
  update.exec();
}

bool OutboundLedger::replace_settled(LedgerKind kind, std::string_view source_key, std::string_view content_hash,
                                    std::int64_t remote_id, std::string_view body) {
  changed(kind);
  SQLite::Statement& upsert = store_.prepared(fmt::format(
      "INSERT INTO outbound_ledger (kind, source_key, content_hash, state, remote_id, body, result_pending, "
      "created_at, updated_at) VALUES (?1, ?2, ?3, 'applied', ?4, nullif(?5, ''), 1, {0}, {0}) "
      "ON CONFLICT (kind, source_key) DO UPDATE SET content_hash = excluded.content_hash, state = 'applied', "
      "remote_id = excluded.remote_id, body = excluded.body, last_error = NULL, result_pending = 1, "
      "updated_at = excluded.updated_at WHERE state NOT IN ('in_flight', 'unknown')",
      kSqlNow));
  upsert.bind(1, std::string(to_string(kind)));
  upsert.bind(2, std::string(source_key));
  upsert.bind(3, std::string(content_hash));
  upsert.bind(4, remote_id);
  upsert.bind(5, std::string(body));
  return upsert.exec() == 1;
}

bool OutboundLedger::replace_unsettled_body(LedgerKind kind, std::string_view source_key, std::string_view body) {
  SQLite::Statement& update = store_.prepared(
      "UPDATE outbound_ledger SET body = ?1 WHERE kind = ?2 AND source_key = ?3 "
      "AND state IN ('in_flight', 'unknown') AND body IS NOT ?1");
  update.bind(1, std::string(body));
  update.bind(2, std::string(to_string(kind)));
  update.bind(3, std::string(source_key));
  return update.exec() == 1;
}

void OutboundLedger::set_note(LedgerKind kind, std::string_view source_key, std::string_view note) {
  changed(kind);
  static const std::string sql = fmt::format(
      "UPDATE outbound_ledger SET note = ?, result_pending = 1, updated_at = {} WHERE kind = ? AND source_key = ?",
      kSqlNow);
  SQLite::Statement& update = store_.prepared(sql);
  update.bind(1, std::string(note));
  update.bind(2, std::string(to_string(kind)));
  update.bind(3, std::string(source_key));
  update.exec();
}

std::pair<long, std::string> OutboundLedger::size_and_newest() {
  SQLite::Statement& query = store_.prepared("SELECT count(*), coalesce(max(updated_at), '') FROM outbound_ledger");
  query.executeStep();
  std::pair<long, std::string> result{query.getColumn(0).getInt64(), query.getColumn(1).getString()};
  query.reset();
  return result;
}

std::vector<LedgerEntry> OutboundLedger::unclear(LedgerKind kind, std::chrono::milliseconds quiet, int limit) {
  SQLite::Statement& query = store_.prepared(fmt::format(
      "SELECT {} FROM outbound_ledger WHERE kind = ? AND state = 'unknown' "
      "AND (updated_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?) OR sent_at IS NULL) "
      "ORDER BY updated_at, source_key LIMIT ?",
      kColumns));
  query.bind(1, std::string(to_string(kind)));
  query.bind(2, sql_modifier_ago(quiet));
  query.bind(3, limit);
  std::vector<LedgerEntry> entries;
  while (query.executeStep()) entries.push_back(entry_from(query));
  return entries;
}

std::vector<LedgerEntry> OutboundLedger::unwritten_results(LedgerKind kind, int limit) {
  SQLite::Statement& query =
      store_.prepared(fmt::format("SELECT {} FROM outbound_ledger WHERE kind = ? AND result_pending = 1 "
                                  "ORDER BY source_key LIMIT ?",
                                  kColumnsButBody));
  query.bind(1, std::string(to_string(kind)));
  query.bind(2, limit);
  std::vector<LedgerEntry> entries;
  while (query.executeStep()) entries.push_back(entry_from(query));
  return entries;
}

void OutboundLedger::mark_results_written(std::span<const LedgerEntry> entries) {
  // An operator's requeue from another process may have changed an entry after it was read: only
  // the version read (its updated_at and state) is noted written.
  static const sql::PagedStatement paged(kRowsPerStatement, [](std::size_t rows) {
    return fmt::format(
        "WITH written (kind, source_key, updated_at, state) AS (VALUES {}) "
        "UPDATE outbound_ledger SET result_pending = 0 FROM written WHERE outbound_ledger.kind = written.kind AND "
        "outbound_ledger.source_key = written.source_key AND outbound_ledger.updated_at = written.updated_at AND "
        "outbound_ledger.state = written.state",
        sql::parameter_rows(rows, 4, 1));
  });
  paged.for_each_page(entries, [&](std::span<const LedgerEntry> page, const std::string& sql) {
    SQLite::Statement& update = store_.prepared(sql);
    for (std::size_t i = 0; i < page.size(); ++i) {
      const auto at = static_cast<int>(i * 4);
      update.bind(at + 1, std::string(to_string(page[i].kind)));
      update.bind(at + 2, page[i].source_key);
      update.bind(at + 3, page[i].updated_at);
      update.bind(at + 4, std::string(to_string(page[i].state)));
    }
    update.exec();
  });
}

std::map<std::pair<LedgerKind, LedgerState>, int> OutboundLedger::backlog() {
  // The counts the triggers keep (schema version 9): a few rows, however long the ledger.
  SQLite::Statement& query = store_.prepared("SELECT kind, state, count FROM outbound_ledger_counts WHERE count > 0");
  std::map<std::pair<LedgerKind, LedgerState>, int> counts;
  while (query.executeStep()) {
    counts[{kind_from(query.getColumn(0).getString()), state_from(query.getColumn(1).getString())}] =
        query.getColumn(2).getInt();
  }
  return counts;
}

int OutboundLedger::waiting(LedgerKind kind) {
  SQLite::Statement& query = store_.prepared(
      "SELECT count(*) FROM outbound_ledger WHERE kind = ? AND state IN ('pending', 'in_flight', "
      "'unknown')");
  query.bind(1, std::string(to_string(kind)));
  query.executeStep();
  const int count = query.getColumn(0).getInt();
  query.reset();
  return count;
}

OutboundLedger::Version OutboundLedger::version(std::initializer_list<LedgerKind> kinds) {
  return store_.version(own_writes(kinds));
}

std::uint64_t OutboundLedger::own_writes(std::initializer_list<LedgerKind> kinds) const {
  // Each count only grows: equal sums, equal counts.
  std::uint64_t sum = 0;
  for (const LedgerKind kind : kinds) sum += writes_[static_cast<std::size_t>(kind)];
  return sum;
}

void OutboundLedger::changed_all() {
  for (const LedgerKind kind : kLedgerKinds) changed(kind);
}

std::vector<LedgerEntry> OutboundLedger::latest(LedgerState state, int limit, Kinds kinds) {
  const std::string_view of_kinds = kinds == Kinds::all       ? ""
                                    : kinds == Kinds::catalog ? " AND kind IN ('product_create', 'product_update')"
                                                              : " AND kind NOT IN ('product_create', 'product_update')";
  SQLite::Statement& query = store_.prepared(fmt::format(
      "SELECT {} FROM outbound_ledger WHERE state = ?{} ORDER BY updated_at DESC LIMIT ?", kColumns, of_kinds));
  query.bind(1, std::string(to_string(state)));
  query.bind(2, limit);
  std::vector<LedgerEntry> entries;
  while (query.executeStep()) entries.push_back(entry_from(query));
  return entries;
}

std::optional<std::string> OutboundLedger::oldest_waiting_since() {
  // One indexed lookup per kind and state rather than a scan of the whole ledger.
  std::optional<std::string> oldest;
  SQLite::Statement& query =
      store_.prepared("SELECT min(updated_at) FROM outbound_ledger WHERE kind = ? AND state = ?");
  for (const LedgerKind kind : kLedgerKinds) {
    for (const LedgerState state : {LedgerState::pending, LedgerState::unknown}) {
      query.reset();
      query.bind(1, std::string(to_string(kind)));
      query.bind(2, std::string(to_string(state)));
      if (query.executeStep() && !query.getColumn(0).isNull()) {
        std::string since = query.getColumn(0).getString();
        if (!oldest || since < *oldest) oldest = std::move(since);
      }
    }
  }
  query.reset();
  return oldest;
}

bool OutboundLedger::requeue(LedgerKind kind, std::string_view source_key) {
  if (builds_from_source(kind)) return set_rejected_version(kind, source_key, kVersionForgotten);
  changed(kind);
  SQLite::Statement& update = store_.prepared(
      fmt::format("UPDATE outbound_ledger SET state = 'pending', result_pending = 1, "
                  "updated_at = {} WHERE kind = ? AND source_key = ? AND state = 'rejected' AND length(body) > 0",
                  kSqlNow));
  update.bind(1, std::string(to_string(kind)));
  update.bind(2, std::string(source_key));
  return update.exec() == 1;
}

int OutboundLedger::requeue_all_rejected() {
  changed_all();
  SQLite::Transaction transaction(store_.database());
  const int resent = store_.database().exec(fmt::format(
      "UPDATE outbound_ledger SET state = 'pending', result_pending = 1, updated_at = {} "
      "WHERE state = 'rejected' AND length(body) > 0 AND kind NOT IN ('product_create', 'product_update')",
      kSqlNow));
  SQLite::Statement forget(store_.database(),
                           fmt::format("UPDATE outbound_ledger SET content_hash = ?, updated_at = {} "
                                       "WHERE state = 'rejected' AND kind IN ('product_create', 'product_update')",
                                       kSqlNow));
  forget.bind(1, std::string(kVersionForgotten));
  const int rebuilt = forget.exec();
  transaction.commit();
  return resent + rebuilt;
}

std::vector<std::string> OutboundLedger::rejected_at_version(LedgerKind kind, std::string_view content_hash,
                                                             int limit) {
  SQLite::Statement& query = store_.prepared(
      "SELECT source_key FROM outbound_ledger WHERE kind = ? AND state = 'rejected' AND content_hash = ? "
      "ORDER BY updated_at, source_key LIMIT ?");
  query.bind(1, std::string(to_string(kind)));
  query.bind(2, std::string(content_hash));
  query.bind(3, limit);
  std::vector<std::string> keys;
  while (query.executeStep()) keys.push_back(query.getColumn(0).getString());
  query.reset();
  return keys;
}

bool OutboundLedger::set_rejected_version(LedgerKind kind, std::string_view source_key,
                                          std::string_view content_hash) {
  changed(kind);
  SQLite::Statement& update = store_.prepared(fmt::format(
      "UPDATE outbound_ledger SET content_hash = ?, updated_at = {} WHERE kind = ? AND source_key = ? AND "
      "state = 'rejected'",
      kSqlNow));
  update.bind(1, std::string(content_hash));
  update.bind(2, std::string(to_string(kind)));
  update.bind(3, std::string(source_key));
  return update.exec() == 1;
}

}  // namespace fulfillsync::daemon
