#pragma once
// The outbound ledger: what the daemon has sent to the provider, and how far each send got. It is
// what makes creates exactly-once in effect over a wire that is at-least-once:
//
//   pending ──mark_in_flight──▶ in_flight ──mark_created──▶ created
//      ▲                           │  ├──mark_rejected──▶ rejected  (400/422: until the row changes)
//      └──mark_pending (429,       │  └──mark_unknown───▶ unknown   (no answer, 5xx, duplicate,
//         not sent)  ◀─────────────┘                                 crash while in flight)
//
// `in_flight` is on disk before a request leaves; a row found `in_flight` at start was interrupted
// and becomes `unknown`. An `unknown` row is looked up at the provider before it is ever sent
// again: found, it is adopted (created); absent, it goes back to pending with the same body.
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/daemon/checkpoint_store.hpp"

namespace fulfillsync::daemon {

enum class LedgerKind { order_create, order_cancel, return_create };
enum class LedgerState { pending, in_flight, created, rejected, unknown };

std::string_view to_string(LedgerKind kind);
std::string_view to_string(LedgerState state);

struct LedgerEntry {
  LedgerKind kind = LedgerKind::order_create;
  std::string source_key;    // the merchant's reference id
  std::string content_hash;  // of the source row version `body` was built from
  LedgerState state = LedgerState::pending;
  int attempts = 0;
  std::string body;  // the request body, built once per row version and resent unchanged
  std::optional<std::int64_t> remote_id;
  std::string last_error;
  std::string created_at;
  std::string updated_at;
};

// What offer() did with a source row version.
enum class Offer {
  queued,        // new, or a changed version of a rejected/pending row: pending with the new body
  unchanged,     // the ledger already has this version; nothing to do
  held,          // a changed version while a send is in flight or unknown: the old body is settled first
  already_sent,  // a changed version of a created row: the API cannot apply it (reported by the caller)
};

class OutboundLedger {
 public:
  explicit OutboundLedger(CheckpointStore& store);

  // At start: every row left in_flight by a crash becomes unknown. Returns how many.
  int recover_interrupted();

  std::optional<LedgerEntry> find(LedgerKind kind, std::string_view source_key);

  // Records that the source row `source_key` is at version `content_hash`, whose request body is `body`.
  Offer offer(LedgerKind kind, std::string_view source_key, std::string_view content_hash, std::string_view body);

  // Durably marks the row as being sent (attempts + 1). Must precede the request.
  void mark_in_flight(LedgerKind kind, std::string_view source_key);
  void mark_created(LedgerKind kind, std::string_view source_key, std::int64_t remote_id);
  void mark_rejected(LedgerKind kind, std::string_view source_key, std::string_view reason);
  void mark_unknown(LedgerKind kind, std::string_view source_key, std::string_view reason);
  // Not executed (429, not sent): back to pending, the same body.
  void mark_pending(LedgerKind kind, std::string_view source_key, std::string_view reason);

  // Rows in `state` of `kind`, oldest change first, at most `limit`.
  std::vector<LedgerEntry> in_state(LedgerKind kind, LedgerState state, int limit);

  // How many rows are in each state, by kind.
  std::map<std::pair<LedgerKind, LedgerState>, int> backlog();
  // When the oldest row still waiting to be sent (pending or unknown) last changed; nothing when none waits.
  std::optional<std::string> oldest_waiting_since();

  // An operator's requeue: a rejected row goes back to pending with its body. False when `source_key`
  // has no rejected row.
  bool requeue(LedgerKind kind, std::string_view source_key);
  int requeue_all_rejected();

 private:
  // Moves a row from one of `from` to `to`; a row in any other state is a broken invariant.
  void transition(LedgerKind kind, std::string_view source_key, std::initializer_list<LedgerState> from,
                  LedgerState to, std::optional<std::int64_t> remote_id, std::optional<std::string_view> error);
  CheckpointStore& store_;
};

}  // namespace fulfillsync::daemon
