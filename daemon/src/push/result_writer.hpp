#pragma once
// The merchant's result tables, written from the outbound ledger: after each ledger commit, and
// again for any entry whose write failed or was cut short (the ledger keeps them marked). Writes
// are upserts of the ledger's state, so replaying one changes nothing.
//
// An order's row combines its create and its cancel: `cancelled` once the cancel is applied (or
// when it was cancelled before it was ever created), `cancelling` while the cancel waits, and
// `cancel_rejected` when the provider refused it.
#include <optional>
#include <span>
#include <string_view>

#include "fulfillsync/common/asio.hpp"
#include "fulfillsync/daemon/job/sync_metrics.hpp"
#include "fulfillsync/daemon/store/outbound_ledger.hpp"
#include "fulfillsync/merchant/sync_results.hpp"

namespace fulfillsync::daemon {

// The entries are borrowed (null: none), so that building the rows copies nothing from the ledger's.
merchant::SyncResult order_result(const LedgerEntry* create, const LedgerEntry* cancel);
merchant::SyncResult return_result(const LedgerEntry& create);
// A product's row combines its create and its latest update: `updating` while an update waits,
// `update_rejected` when the provider (or the local rules) refused it; a note names variants removed
// at the merchant.
merchant::SyncResult product_result(const LedgerEntry* create, const LedgerEntry* update);

class ResultWriter {
 public:
  ResultWriter(OutboundLedger& ledger, merchant::SyncResults& results, SyncMetrics& metrics);

  // Writes the results of up to `limit` entries whose results are not written yet; returns whether
  // everything was written. `job` names the failpoints. A failed write is counted
  // (fulfillsync_result_write_failures_total) and its entries left for the next call.
  // The jobs await it, and its failure fails their run (the MerchantDatabaseError is thrown): the
  // scheduler logs it, counts it as the merchant database's and tries again after its wait, so a
  // result table that refuses writes is a failing job with an alert, not a warning a run. The event
  // loop serves the other jobs' sends while the merchant database works.
  boost::asio::awaitable<bool> flush_async(merchant::SourceKind kind, std::string_view job, int limit = 1000);
  // The same, blocking, for `recover-store`: a failed write is logged (the next start writes it).
  bool flush(merchant::SourceKind kind, std::string_view job, int limit = 1000);

  // Just before creates leave, in the commit that marks them in flight (PushJob::send_marked): their
  // rows say in_flight, so that a store restored from an older copy, which cannot know they were
  // sent, looks them up by reference before sending them again (StoreRebuild). A product update's row
  // says updating, with the update's time: a store restored from an older copy then finds the result
  // tables newer than itself and compares the product with the provider before its next update,
  // rather than take its own last version as what the provider holds. Only what leaves now
  // is announced, so a kill leaves no more rows in flight than ledger entries. Each row keeps its
  // entry's ledger time, so whatever state the ledger holds next replaces it. False when the write
  // failed (logged and counted; the sends go out all the same). Awaited as flush_async is.
  // `leaving` indexes `entries` (a chunk's, read once): the entries are not copied to be announced.
  boost::asio::awaitable<bool> announce_sends(merchant::SourceKind kind, std::span<const LedgerEntry> entries,
                                              std::span<const std::size_t> leaving, std::string_view job);

 private:
  // What a flush writes: the entries read and their result rows.
  struct Unwritten {
    std::vector<LedgerEntry> entries;
    std::vector<merchant::SyncResult> results;
  };
  Unwritten unwritten(merchant::SourceKind kind, int limit);
  // After the write of `unwritten`: marks its entries written.
  bool settle(const Unwritten& unwritten, std::string_view job, int limit);

  OutboundLedger& ledger_;
  merchant::SyncResults& results_;
  SyncMetrics& metrics_;
};

}  // namespace fulfillsync::daemon
