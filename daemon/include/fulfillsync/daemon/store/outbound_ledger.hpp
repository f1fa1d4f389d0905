#pragma once
// The outbound ledger: what the daemon has sent to the provider, and how far each send got. It is
// what makes creates exactly-once in effect over a wire that is at-least-once:
//
//   pending ──mark_in_flight──▶ in_flight ──mark_created──▶ created   (a create)
//                                          ──mark_applied──▶ applied  (a cancel)
//      ▲                           │  ├──mark_rejected──▶ rejected  (400/422: until the row changes)
//      └──mark_pending (429,       │  └──mark_unknown───▶ unknown   (no answer, 5xx, duplicate,
//         not sent)  ◀─────────────┘                                 crash while in flight)
//   pending, rejected, unknown (found absent) ──withdraw──▶ withdrawn (never to be sent)
//
// `in_flight` is on disk just before its request leaves (not before it waits for the rate budget);
// a row found `in_flight` at start was interrupted and becomes `unknown`, keeping its send time. An
// `unknown` row is looked up at the provider before it is ever sent again: found, it is adopted
// (created, or applied); absent, it goes back to pending, and the caller offers the row's current version.
//
// Every change but `in_flight` also marks the row's result as unwritten: the merchant's result
// table is written after the ledger commit, and replayed from here when that write fails. (A chunk of
// creates is written to the result table as in_flight before it leaves: ResultWriter::announce_sends.)
//
// Each call commits on its own; a Batch groups many into one commit (one fsync, or none for a batch
// whose loss only repeats work: Durability::with_next).
#include <array>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include "fulfillsync/daemon/store/checkpoint_store.hpp"

namespace fulfillsync::daemon {

// product_create: POST /product with its variants. product_update: the changes of a created product
// (PATCH /product/{id}, POST and PATCH /product/{id}/variants), applied once per product version.
enum class LedgerKind { order_create, order_cancel, return_create, product_create, product_update };
inline constexpr LedgerKind kLedgerKinds[] = {LedgerKind::order_create, LedgerKind::order_cancel,
                                              LedgerKind::return_create, LedgerKind::product_create,
                                              LedgerKind::product_update};

// The note on a row version that came after its create was sent: the provider has (or may have) the
// earlier version, and the API cannot change an order or return it has created.
inline constexpr std::string_view kChangedAfterSending =
    "changed at the merchant after it was sent to the provider; the API cannot apply the change";
// The note on a create the provider refused as a duplicate reference and that a lookup then found:
// another send made it, one this ledger does not remember (a store restored from an older copy, or
// lost), so what the provider holds is the version that send carried.
inline constexpr std::string_view kCreatedByAnEarlierSend =
    "created at the provider by an earlier send this checkpoint store does not remember (restored or lost): the "
    "provider has the version that send carried, which may be older than this row";
// `created` ends a create (the provider made the order or return); `applied` ends a cancel.
enum class LedgerState { pending, in_flight, created, applied, rejected, unknown, withdrawn };

// Where a send of this kind ends when the provider does it: created, or applied for a cancel or a
// product's update.
constexpr LedgerState done_state(LedgerKind kind) {
  return kind == LedgerKind::order_cancel || kind == LedgerKind::product_update ? LedgerState::applied
                                                                                : LedgerState::created;
}
// Whether a later version of a row whose send is done is sent too (a product's next update), rather
// than noted as one the API cannot apply.
constexpr bool sends_each_version(LedgerKind kind) { return kind == LedgerKind::product_update; }
// Whether the job builds each send from the source row itself (the catalog) rather than from a
// body offered by the intake: an operator's retry then builds it again (OutboundLedger::requeue).
constexpr bool builds_from_source(LedgerKind kind) {
  return kind == LedgerKind::product_create || kind == LedgerKind::product_update;
}

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
  std::string remote_status;      // the provider's status in its answer
  std::string remote_created_at;  // when the provider created it (ISO 8601), "" when not known
  std::string last_error;
  std::string note;  // a change at the merchant the API cannot apply
  bool result_pending = true;
  std::string created_at;
  std::string updated_at;
  std::string sent_at;  // when its request last left; "" before the first send
  // When `body` was last known to match the source row (built from it, or the row read again
  // unchanged): unlike updated_at, not moved by a send put back as pending.
  std::string read_at;
};

// What offer() did with a source row version.
enum class Offer {
  queued,        // new, or a changed version of a pending/rejected/withdrawn row (or of a done one, for a
                 // kind that sends each version): pending with the new body
  unchanged,     // the ledger already has this version; nothing to do
  held,          // a changed version while a send is in flight or unknown: the old body is settled first
  already_sent,  // a changed version of a row already sent and created: the API cannot apply it. The
                 // version and a note are recorded (so it is reported once); the caller warns.
};

class OutboundLedger {
 public:
  explicit OutboundLedger(CheckpointStore& store);
  OutboundLedger(const OutboundLedger&) = delete;
  OutboundLedger& operator=(const OutboundLedger&) = delete;

  // When a batch's commit reaches the disk.
  enum class Durability {
    synced,     // before commit() returns (synchronous = FULL): what must hold before a request leaves
    with_next,  // with the next synced commit (the WAL is synced in order): what a power loss may only
                // make the daemon do again, e.g. note that result rows are written
  };

  class Batch {
   public:
    explicit Batch(OutboundLedger& ledger, Durability durability = Durability::synced);
    void commit();  // without it, nothing of the batch is kept

   private:
    // Declared first: set before the transaction begins, put back once it ended.
    struct Synchronous {
      Synchronous(CheckpointStore& store, Durability durability);
      ~Synchronous();
      CheckpointStore& store;
      bool deferred;
    } synchronous_;
    CheckpointStore::WriteTransaction transaction_;
  };
  Batch batch(Durability durability = Durability::synced) { return Batch(*this, durability); }

  // At start: every row left in_flight by a crash becomes unknown. Its updated_at stays the time it
  // was sent, from which the wait before its lookup counts. Returns how many.
  int recover_interrupted();

  std::optional<LedgerEntry> find(LedgerKind kind, std::string_view source_key);
  // The ledger's content hash of each of `source_keys` it has an entry for, one statement per
  // kKeysPerHashLookup keys.
  static constexpr std::size_t kKeysPerHashLookup = 100;
  std::map<std::string, std::string, std::less<>> hashes(LedgerKind kind, std::span<const std::string> source_keys);
  // The same with each entry's state.
  struct HeldVersion {
    std::string content_hash;
    LedgerState state = LedgerState::pending;
  };
  std::map<std::string, HeldVersion, std::less<>> held_versions(LedgerKind kind,
                                                                std::span<const std::string> source_keys);

  // Records that the source row `source_key` is at version `content_hash`, whose request body is `body`.
  Offer offer(LedgerKind kind, std::string_view source_key, std::string_view content_hash, std::string_view body);
  // The same, `existing` being what find(kind, source_key) has just returned in this transaction:
  // a caller that looked the entry up already does not look it up twice.
  Offer offer(LedgerKind kind, std::string_view source_key, std::string_view content_hash, std::string_view body,
              const std::optional<LedgerEntry>& existing);

  // Durably marks the rows as being sent (attempts + 1), every one of them pending. Must precede the
  // requests. kRowsPerStatement rows a statement: the marks of a chunk's sends leaving together.
  static constexpr std::size_t kRowsPerStatement = 100;
  void mark_in_flight(LedgerKind kind, std::span<const std::string_view> source_keys);
  void mark_in_flight(LedgerKind kind, std::string_view source_key);
  // A create the provider made. `remote_created_at`: its creation time (ISO 8601), "" when its answer
  // has none.
  void mark_created(LedgerKind kind, std::string_view source_key, std::int64_t remote_id,
                    std::string_view remote_status, std::string_view remote_created_at = {});
  // The same for the answers of several sends (borrowed), kRowsPerStatement a statement.
  struct Created {
    std::string_view source_key;
    std::int64_t remote_id = 0;
    std::string_view remote_status;
    std::string_view remote_created_at;
  };
  void mark_created(LedgerKind kind, std::span<const Created> created);
  // A cancel the provider applied to order `remote_id`.
  void mark_applied(std::string_view source_key, std::int64_t remote_id, std::string_view remote_status);
  // A send of `kind` (a cancel, a product's update) the provider applied to `remote_id`.
  void mark_applied(LedgerKind kind, std::string_view source_key, std::int64_t remote_id,
                    std::string_view remote_status);
  void mark_rejected(LedgerKind kind, std::string_view source_key, std::string_view reason);
  void mark_unknown(LedgerKind kind, std::string_view source_key, std::string_view reason);
  // Not executed (429, not sent): back to pending, the same body.
  void mark_pending(LedgerKind kind, std::string_view source_key, std::string_view reason);
  // An applied cancel whose order the provider shows not cancelled after all: pending again, to be
  // read and sent once more. False when the cancel is not applied (left as it is).
  bool reopen_cancel(std::string_view source_key, std::string_view reason);
  // A cancel the merchant asked for, of an order the provider has and does not show cancelled, that
  // the ledger does not hold (a store restored or lost) or gave up as never needed (withdrawn while
  // the order seemed never created): pending, to be sent. False when it holds it otherwise (left as it is).
  bool queue_cancel(std::string_view source_key, std::string_view content_hash, std::string_view reason);
  // Never to be sent (an order cancelled before it was created), recording `content_hash` as the
  // version seen; creates the entry when there is none. A row in flight or created cannot be withdrawn.
  void withdraw(LedgerKind kind, std::string_view source_key, std::string_view content_hash,
                std::string_view reason);

  // To be looked up at the provider by reference before anything is concluded: the row is unknown
  // to the ledger, or pending or rejected by it, yet something says it may exist at the provider (an
  // order cancelled at the merchant whose create this ledger never saw settle, e.g. after a restore
  // of an older store). Creates the entry when there is none. Never sent by this ledger, it is due
  // for its lookup at once (unclear() waits only for sends), unless another process may have sent
  // it, at the earliest `sent_elsewhere_at` (ISO 8601): that send may still be under way, so the
  // lookup waits the quiet time from now, as after a send of its own, and sent_at says when that
  // send may have left. `note` is kept whatever the lookup finds (e.g. kCreatedByAnEarlierSend:
  // what it finds, a send this ledger forgot may have made).
  void look_up_first(LedgerKind kind, std::string_view source_key, std::string_view content_hash,
                     std::string_view reason, std::string_view note = {},
                     const std::optional<std::string>& sent_elsewhere_at = std::nullopt);
  // Created at the provider as `remote_id`, known from the merchant's result table rather than from
  // an answer (a lost or older store rebuilt): any state but done or in flight becomes done
  // (done_state: created, or applied for a cancel). Returns false when the entry was already done (or
  // is in flight) and is left as it was. `body`, when given, becomes the entry's body ("" for none): a
  // product's, what the provider holds (the base of its next update), or none when that is not known.
  bool adopt(LedgerKind kind, std::string_view source_key, std::string_view content_hash, std::int64_t remote_id,
             std::string_view remote_status, std::string_view remote_created_at, std::string_view note,
             std::optional<std::string_view> body = std::nullopt);
  // The source row was read again and still holds the version the entry's body was built from.
  void note_read(LedgerKind kind, std::string_view source_key);
  // Applied as `body` says, known from the merchant's result table to be newer than this ledger (an
  // older store restored): a settled entry of `kind` becomes applied with `content_hash` and `body`,
  // or is made so. Left as it is while in flight or unknown (returns false): its own outcome settles
  // it first.
  bool replace_settled(LedgerKind kind, std::string_view source_key, std::string_view content_hash,
                       std::int64_t remote_id, std::string_view body);
  // The body an entry in flight or unknown is sent again with, in the same state (an older store
  // restored: what its send was built from is out of date). Returns false when the entry is settled,
  // absent, or holds that body already.
  bool replace_unsettled_body(LedgerKind kind, std::string_view source_key, std::string_view body);
  // How many entries the ledger holds, and when the newest of them last changed ("" when empty).
  std::pair<long, std::string> size_and_newest();

  // The entry's result is to be written again (the result table was told something else meanwhile).

  // Sets the note of an entry (see kCreatedByAnEarlierSend).
  void set_note(LedgerKind kind, std::string_view source_key, std::string_view note);

  // Rows in `state` of `kind`, oldest change first, at most `limit`.
  std::vector<LedgerEntry> in_state(LedgerKind kind, LedgerState state, int limit);
  // Entries left unknown (sent without a clear answer, or interrupted) and unchanged for at least
  // `quiet` since their answer or, when interrupted, since they were sent; oldest first, at most `limit`. Until then the provider may still act on the send (it was queued or slow, or the
  // process that sent it died just before), so a lookup finding nothing could have it sent twice.
  std::vector<LedgerEntry> unclear(LedgerKind kind, std::chrono::milliseconds quiet, int limit);

  // Entries of `kind` whose result rows are not written yet, at most `limit`, without their bodies.
  std::vector<LedgerEntry> unwritten_results(LedgerKind kind, int limit);
  // The result rows of `entries` are written (each unless its entry changed since it was read),
  // kRowsPerStatement entries a statement.
  void mark_results_written(std::span<const LedgerEntry> entries);

  // Entries of `kind` still to be sent or looked up (pending, in_flight, unknown).
  int waiting(LedgerKind kind);

  // What can change the entries of some kinds (CheckpointStore::Version): this ledger's own writes of
  // them, and every commit another connection makes to the store (an operator's `retry`). Equal
  // versions, nothing of those kinds changed between them: a job that found nothing to do need not
  // ask the ledger again (PushJob::idle_at_).
  using Version = CheckpointStore::Version;
  Version version(std::initializer_list<LedgerKind> kinds);
  // Only the first part: no query at all.
  std::uint64_t own_writes(std::initializer_list<LedgerKind> kinds) const;
  // The latest entries in `state` of `kinds`, newest first (for `status`).
  enum class Kinds { all, catalog, orders_and_returns };  // catalog: those for which builds_from_source
  std::vector<LedgerEntry> latest(LedgerState state, int limit, Kinds kinds = Kinds::all);

  // How many rows are in each state, by kind.
  std::map<std::pair<LedgerKind, LedgerState>, int> backlog();
  // When the oldest row still waiting to be sent (pending or unknown) last changed; nothing when none waits.
  std::optional<std::string> oldest_waiting_since();

  // An operator's requeue: a row the provider rejected goes back to pending with its body. False when
  // `source_key` has no such row; a row that failed local validation has no body and is sent once
  // the merchant fixes it. A product (builds_from_source) is not resent as it was: its rejected
  // entry forgets its version (kVersionForgotten), and push_products takes the product again as the
  // catalog has it, built and checked anew, whatever failed (the provider's side, a local rule,
  // api.version). Safe beside a running daemon.
  bool requeue(LedgerKind kind, std::string_view source_key);
  int requeue_all_rejected();

  // The version a requeued product's entry holds: equal to no row's content hash.
  static constexpr std::string_view kVersionForgotten = "";
  // Rejected entries of `kind` holding `content_hash` (kVersionForgotten: the requeued products),
  // at most `limit`, oldest change first.
  std::vector<std::string> rejected_at_version(LedgerKind kind, std::string_view content_hash, int limit);
  // Sets the version a rejected entry holds; false when `kind` has no rejected entry for `source_key`.
  bool set_rejected_version(LedgerKind kind, std::string_view source_key, std::string_view content_hash);

 private:
  // Moves a row from one of `from` to `to`; a row in any other state is a broken invariant.
  void transition(LedgerKind kind, std::string_view source_key, std::initializer_list<LedgerState> from,
                  LedgerState to, std::optional<std::int64_t> remote_id, std::optional<std::string_view> remote_status,
                  std::optional<std::string_view> error, std::optional<std::string_view> remote_created_at = {});
  // Inserts or overwrites an entry that is neither created nor in flight; false when it is one of those.
  bool put(LedgerKind kind, std::string_view source_key, std::string_view content_hash, LedgerState state,
           std::optional<std::int64_t> remote_id, std::string_view remote_status, std::string_view error,
           std::string_view remote_created_at, std::string_view note);
  // Counts a write that may change what waits of `kind` (see version()); every kind, unknown which.
  void changed(LedgerKind kind) { ++writes_[static_cast<std::size_t>(kind)]; }
  void changed_all();

  CheckpointStore& store_;
  std::unordered_map<unsigned, std::string> transition_sql_;  // by the set of states it moves from
  std::array<std::uint64_t, std::size(kLedgerKinds)> writes_{};  // by kind
};

}  // namespace fulfillsync::daemon
