#include "fulfillsync/daemon/outbound_ledger.hpp"

#include <cassert>
#include <cstdio>
#include <cstdlib>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

namespace fulfillsync::daemon {
namespace {

constexpr const char* kNow = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

LedgerState state_from(std::string_view text) {
  if (text == "pending") return LedgerState::pending;
  if (text == "in_flight") return LedgerState::in_flight;
  if (text == "created") return LedgerState::created;
  if (text == "rejected") return LedgerState::rejected;
  if (text == "unknown") return LedgerState::unknown;
  assert(false && "the schema's CHECK allows no other ledger state");
  std::abort();
}

LedgerKind kind_from(std::string_view text) {
  if (text == "order_create") return LedgerKind::order_create;
  if (text == "order_cancel") return LedgerKind::order_cancel;
  if (text == "return_create") return LedgerKind::return_create;
  assert(false && "the schema's CHECK allows no other ledger kind");
  std::abort();
}

constexpr const char* kColumns =
    "kind, source_key, content_hash, state, attempts, body, remote_id, coalesce(last_error, ''), created_at, updated_at";

LedgerEntry entry_from(SQLite::Statement& row) {
  LedgerEntry entry;
  entry.kind = kind_from(row.getColumn(0).getString());
  entry.source_key = row.getColumn(1).getString();
  entry.content_hash = row.getColumn(2).getString();
  entry.state = state_from(row.getColumn(3).getString());
  entry.attempts = row.getColumn(4).getInt();
  entry.body = row.getColumn(5).getString();
  if (!row.getColumn(6).isNull()) entry.remote_id = row.getColumn(6).getInt64();
  entry.last_error = row.getColumn(7).getString();
  entry.created_at = row.getColumn(8).getString();
  entry.updated_at = row.getColumn(9).getString();
  return entry;
}

}  // namespace

std::string_view to_string(LedgerKind kind) {
  switch (kind) {
    case LedgerKind::order_create: return "order_create";
    case LedgerKind::order_cancel: return "order_cancel";
    case LedgerKind::return_create: return "return_create";
  }
  return "order_create";
}

std::string_view to_string(LedgerState state) {
  switch (state) {
    case LedgerState::pending: return "pending";
    case LedgerState::in_flight: return "in_flight";
    case LedgerState::created: return "created";
    case LedgerState::rejected: return "rejected";
    case LedgerState::unknown: return "unknown";
  }
  return "pending";
}

OutboundLedger::OutboundLedger(CheckpointStore& store) : store_(store) {}

int OutboundLedger::recover_interrupted() {
  return store_.database().exec(fmt::format(
      "UPDATE outbound_ledger SET state = 'unknown', last_error = 'interrupted while in flight', updated_at = {} "
      "WHERE state = 'in_flight'",
      kNow));
}

std::optional<LedgerEntry> OutboundLedger::find(LedgerKind kind, std::string_view source_key) {
  SQLite::Statement query(store_.database(),
                          fmt::format("SELECT {} FROM outbound_ledger WHERE kind = ? AND source_key = ?", kColumns));
  query.bind(1, std::string(to_string(kind)));
  query.bind(2, std::string(source_key));
  if (!query.executeStep()) return std::nullopt;
  return entry_from(query);
}

Offer OutboundLedger::offer(LedgerKind kind, std::string_view source_key, std::string_view content_hash,
                            std::string_view body) {
  SQLite::Transaction transaction(store_.database(), SQLite::TransactionBehavior::IMMEDIATE);
  const auto existing = find(kind, source_key);
  Offer result = Offer::queued;
  if (!existing) {
    SQLite::Statement insert(store_.database(),
                             fmt::format("INSERT INTO outbound_ledger (kind, source_key, content_hash, state, body, "
                                         "created_at, updated_at) VALUES (?, ?, ?, 'pending', ?, {0}, {0})",
                                         kNow));
    insert.bind(1, std::string(to_string(kind)));
    insert.bind(2, std::string(source_key));
    insert.bind(3, std::string(content_hash));
    insert.bind(4, body.data(), static_cast<int>(body.size()));
    insert.exec();
  } else if (existing->content_hash == content_hash) {
    result = Offer::unchanged;
  } else if (existing->state == LedgerState::pending || existing->state == LedgerState::rejected) {
    // Fixing a rejected row is how a merchant gets it sent: the new version starts afresh.
    SQLite::Statement update(store_.database(),
                             fmt::format("UPDATE outbound_ledger SET content_hash = ?, body = ?, state = 'pending', "
                                         "attempts = 0, last_error = NULL, updated_at = {} "
                                         "WHERE kind = ? AND source_key = ?",
                                         kNow));
    update.bind(1, std::string(content_hash));
    update.bind(2, body.data(), static_cast<int>(body.size()));
    update.bind(3, std::string(to_string(kind)));
    update.bind(4, std::string(source_key));
    update.exec();
  } else if (existing->state == LedgerState::created) {
    result = Offer::already_sent;
  } else {
    result = Offer::held;
  }
  transaction.commit();
  return result;
}

void OutboundLedger::transition(LedgerKind kind, std::string_view source_key, std::initializer_list<LedgerState> from,
                                LedgerState to, std::optional<std::int64_t> remote_id,
                                std::optional<std::string_view> error) {
  std::string allowed;
  for (const LedgerState state : from) allowed += fmt::format("{}'{}'", allowed.empty() ? "" : ", ", to_string(state));
  SQLite::Statement update(
      store_.database(),
      fmt::format("UPDATE outbound_ledger SET state = ?, attempts = attempts + ?, remote_id = coalesce(?, remote_id), "
                  "last_error = ?, updated_at = {} WHERE kind = ? AND source_key = ? AND state IN ({})",
                  kNow, allowed));
  update.bind(1, std::string(to_string(to)));
  update.bind(2, to == LedgerState::in_flight ? 1 : 0);
  if (remote_id) update.bind(3, *remote_id);
  else update.bind(3);
  if (error) update.bind(4, std::string(*error));
  else update.bind(4);
  update.bind(5, std::string(to_string(kind)));
  update.bind(6, std::string(source_key));
  const int changed = update.exec();
  // The jobs only move rows they have just read in `from`; anything else means two writers or a
  // logic error, and carrying on could send an order twice.
  if (changed != 1) {
    std::fprintf(stderr, "outbound ledger: %s %.*s cannot move to %s\n", std::string(to_string(kind)).c_str(),
                 static_cast<int>(source_key.size()), source_key.data(), std::string(to_string(to)).c_str());
    assert(changed == 1 && "ledger transition from an unexpected state");
    std::abort();
  }
}

void OutboundLedger::mark_in_flight(LedgerKind kind, std::string_view source_key) {
  transition(kind, source_key, {LedgerState::pending}, LedgerState::in_flight, std::nullopt, std::nullopt);
}

void OutboundLedger::mark_created(LedgerKind kind, std::string_view source_key, std::int64_t remote_id) {
  // From unknown too: reconciliation found the order at the provider and adopts its id.
  transition(kind, source_key, {LedgerState::in_flight, LedgerState::unknown}, LedgerState::created, remote_id,
             std::nullopt);
}

void OutboundLedger::mark_rejected(LedgerKind kind, std::string_view source_key, std::string_view reason) {
  transition(kind, source_key, {LedgerState::in_flight, LedgerState::pending}, LedgerState::rejected, std::nullopt,
             reason);
}

void OutboundLedger::mark_unknown(LedgerKind kind, std::string_view source_key, std::string_view reason) {
  transition(kind, source_key, {LedgerState::in_flight}, LedgerState::unknown, std::nullopt, reason);
}

void OutboundLedger::mark_pending(LedgerKind kind, std::string_view source_key, std::string_view reason) {
  transition(kind, source_key, {LedgerState::in_flight, LedgerState::unknown}, LedgerState::pending, std::nullopt,
             reason);
}

std::vector<LedgerEntry> OutboundLedger::in_state(LedgerKind kind, LedgerState state, int limit) {
  SQLite::Statement query(store_.database(),
                          fmt::format("SELECT {} FROM outbound_ledger WHERE kind = ? AND state = ? "
                                      "ORDER BY updated_at, source_key LIMIT ?",
                                      kColumns));
  query.bind(1, std::string(to_string(kind)));
  query.bind(2, std::string(to_string(state)));
  query.bind(3, limit);
  std::vector<LedgerEntry> entries;
  while (query.executeStep()) entries.push_back(entry_from(query));
  return entries;
}

std::map<std::pair<LedgerKind, LedgerState>, int> OutboundLedger::backlog() {
  SQLite::Statement query(store_.database(), "SELECT kind, state, count(*) FROM outbound_ledger GROUP BY kind, state");
  std::map<std::pair<LedgerKind, LedgerState>, int> counts;
  while (query.executeStep()) {
    counts[{kind_from(query.getColumn(0).getString()), state_from(query.getColumn(1).getString())}] =
        query.getColumn(2).getInt();
  }
  return counts;
}

std::optional<std::string> OutboundLedger::oldest_waiting_since() {
  SQLite::Statement query(store_.database(),
                          "SELECT min(updated_at) FROM outbound_ledger WHERE state IN ('pending', 'unknown')");
  if (!query.executeStep() || query.getColumn(0).isNull()) return std::nullopt;
  return query.getColumn(0).getString();
}

bool OutboundLedger::requeue(LedgerKind kind, std::string_view source_key) {
  SQLite::Statement update(store_.database(),
                           fmt::format("UPDATE outbound_ledger SET state = 'pending', attempts = 0, updated_at = {} "
                                       "WHERE kind = ? AND source_key = ? AND state = 'rejected'",
                                       kNow));
  update.bind(1, std::string(to_string(kind)));
  update.bind(2, std::string(source_key));
  return update.exec() == 1;
}

int OutboundLedger::requeue_all_rejected() {
  return store_.database().exec(fmt::format(
      "UPDATE outbound_ledger SET state = 'pending', attempts = 0, updated_at = {} WHERE state = 'rejected'", kNow));
}

}  // namespace fulfillsync::daemon
