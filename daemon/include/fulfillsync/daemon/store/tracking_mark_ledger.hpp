#pragma once
// The tracking marks in the checkpoint store: which shipments the daemon tells the provider have
// their tracking uploaded, and how far each mark got. The discipline of the outbound ledger:
//
//   pending ──mark_in_flight──▶ in_flight ──marked──▶ marked
//      ▲  (not before next_attempt_at)  ├──failed (the provider refused this item)──▶ pending, later
//      │                                ├──not_sent (429, refused credentials) ─────▶ pending
//      │                                └──unknown (no answer, 5xx, crash) ─────────▶ unknown
//      └──────────── looked up: not uploaded ◀── unknown ──looked up: uploaded──▶ marked
//
// A marked shipment is never sent again. Outcomes of a send are committed together (Batch); the
// merchant's tracking row is written afterwards and replayed from here when that write failed.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <SQLiteCpp/Transaction.h>

#include "fulfillsync/daemon/store/checkpoint_store.hpp"
#include "fulfillsync/merchant/pulled_records.hpp"

namespace fulfillsync::daemon {

enum class MarkState { pending, in_flight, marked, unknown };
std::string_view to_string(MarkState state);

struct TrackingMark {
  std::int64_t shipment_id = 0;
  std::int64_t order_id = 0;
  MarkState state = MarkState::pending;
  int attempts = 0;
  std::string last_error;
  std::string updated_at;
  // Since the mark was queued (offered), by the store's clock.
  std::chrono::milliseconds queued_for{0};
};

class TrackingMarkLedger {
 public:
  explicit TrackingMarkLedger(CheckpointStore& store);
  TrackingMarkLedger(const TrackingMarkLedger&) = delete;
  TrackingMarkLedger& operator=(const TrackingMarkLedger&) = delete;

  class Batch {
   public:
    explicit Batch(TrackingMarkLedger& ledger);
    void commit();

   private:
    CheckpointStore::WriteTransaction transaction_;
  };
  Batch batch() { return Batch(*this); }

  // At start: marks left in flight by a crash become unknown. Returns how many.
  int recover_interrupted();

  // Queues the shipments not known yet; returns how many were new.
  int offer(std::span<const merchant::TrackingToMark> shipments);

  // Pending marks whose next attempt is due, oldest first, at most `limit`.
  std::vector<TrackingMark> due(int limit);
  std::vector<TrackingMark> in_state(MarkState state, int limit);
  // Marks left unknown (sent without a clear answer) and unchanged for at least `quiet`, oldest first,
  // at most `limit`. Until then the provider may still act on the send (it was queued or slow, or the
  // process that sent it died just before), so a lookup finding nothing could have it sent twice.
  std::vector<TrackingMark> unclear(std::chrono::milliseconds quiet, int limit);

  void mark_in_flight(std::int64_t shipment_id);
  void mark_marked(std::int64_t shipment_id);
  // The provider refused this item: pending again, not before `retry_after` from now.
  void mark_failed(std::int64_t shipment_id, std::string_view reason, std::chrono::seconds retry_after);
  // Not executed (429, refused credentials, no connection): pending, due at once, the attempt not counted.
  void mark_not_sent(std::int64_t shipment_id);
  void mark_unknown(std::int64_t shipment_id, std::string_view reason);
  // An unknown mark the provider says is not applied: pending, due at once.
  void mark_absent(std::int64_t shipment_id);
  // A pending mark the merchant's tracking rows no longer ask for: removed (offer() queues it again).
  void forget_pending(std::int64_t shipment_id);

  // Marks whose state the merchant's tracking row does not show yet, at most `limit`.
  std::vector<merchant::TrackingMarkResult> unwritten_results(int limit);
  // The merchant's rows show them: marked entries are dropped (their rows say so from now on), the
  // rest kept.
  void results_written(std::span<const merchant::TrackingMarkResult> results);

  // Marks to send or look up: in flight, unknown, or pending without a failure. A mark the provider
  // refused waits for its next attempt and is not counted (like a rejected order).
  int waiting();
  // Marks the provider refused at their last attempt, waiting to be tried again.
  int failing();
  std::map<MarkState, int> counts();

  // The marks' version (CheckpointStore::Version, as the outbound ledger's): unchanged, a job that
  // found nothing to do need not ask again.
  CheckpointStore::Version version() { return store_.version(writes_); }

 private:
  void transition(std::int64_t shipment_id, std::initializer_list<MarkState> from, MarkState to,
                  std::optional<std::string_view> error, std::optional<std::chrono::seconds> retry_after,
                  bool count_attempt);

  CheckpointStore& store_;
  std::uint64_t writes_ = 0;  // this ledger's writes that may have changed a mark (see version())
};

}  // namespace fulfillsync::daemon
