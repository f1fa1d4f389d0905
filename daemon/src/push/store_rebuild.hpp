#pragma once
// Rebuilds the outbound ledger from what the merchant's result tables already record, for a
// checkpoint store that was lost (deleted, or moved aside by `recover-store`) or restored from an
// older copy. Without it every order the store forgot is sent again and refused as a duplicate (one
// wasted create each), and a cancel of an order the store never saw created is lost.
//
//   1. adopt() (local, at start): each result row holding a remote_id whose entry the ledger does not
//      have as created becomes created with that id, the row version (content hash) and note the
//      result records; an order whose result says cancelled also gets its cancel, once the provider
//      confirms it (step 2). A row whose result says a send was unclear (unknown, in_flight) and the
//      ledger never saw sent is looked up by reference before anything is sent. So is a row whose
//      result says pending when the store is behind the result tables (a result row newer than the
//      ledger's entries for it, or one the ledger lacks): the store since replaced may have sent it
//      after its result was written. Every create is announced in the result table as in_flight just
//      before it leaves (ResultWriter::announce_sends), so a send the ledger does not know of leaves
//      that trace; its lookup waits the quiet time, as after a send of the ledger's own. Found,
//      such a row keeps kCreatedByAnEarlierSend: which version that send carried is not known here.
//      An empty store's starting point becomes the oldest result's first sight, so the source tables
//      are read again from where pushing began (the ledger recognises what was sent).
//      A product's update is announced too (its row says updating, with the update's time), so the
//      result tables are newer than a store that never knew the update left: the product is compared
//      with the provider (below), whatever this store last sent.
//      Where push_products runs, each product whose `product_sync` row holds a remote_id becomes
//      created too, never sent again as a POST. Its row created at the version the catalog still
//      holds, the ledger records that version's body as what the provider has (the base of its next
//      update, which then sends only the change); otherwise (changed since, an update under way or
//      refused) what the provider holds is not known: the next pass reads the product there
//      (GET /product/{id}) and sends only what differs from the merchant's version. So it is for a
//      product whose row holds no remote_id (its create unclear, say) but whose first SKU the
//      SKU map (variant_sync, the provider's product list) holds: adopted as that product.
//   2. check() (before the jobs start): the adopted ids are read at the provider, 250 a request
//      (GET /order?IDs=, GET /return?Ids=); what is missing there is reported. An order whose result
//      says the merchant's cancel was sent or being sent and that the provider does not show
//      cancelled gets its cancel queued again, unless the ledger holds it already.
// In a store that is neither lost nor older, step 1 finds nothing to adopt and step 2 sends nothing.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "fulfillsync/api/client.hpp"
#include "fulfillsync/api/models/api_version.hpp"
#include "fulfillsync/daemon/store/checkpoint_store.hpp"
#include "fulfillsync/daemon/store/outbound_ledger.hpp"
#include "fulfillsync/merchant/pulled_tables.hpp"
#include "fulfillsync/merchant/source_tables.hpp"
#include "fulfillsync/merchant/sync_results.hpp"

namespace fulfillsync::daemon {

struct RebuildSummary {
  int orders_adopted = 0;
  int returns_adopted = 0;
  int products_adopted = 0;
  int products_to_compare = 0;  // of those, adopted without knowing what the provider holds
  // Created in this store too, but changed at the provider since (an older store): compared with it.
  int products_behind = 0;
  int cancels_adopted = 0;   // confirmed Cancelled at the provider
  int cancels_queued = 0;    // the result says cancelled or cancelling, the provider does not
  // Some result row is newer than the ledger's entries for it, or has none: another store wrote it.
  bool behind = false;
  bool empty = false;  // the store held nothing (deleted, or moved aside by recover-store)
  int looked_up = 0;         // unclear sends queued for a lookup by reference
  int confirmed = 0;         // adopted ids the provider has
  int missing = 0;           // adopted ids the provider does not have
  int calls = 0;             // requests the check made
  bool checked = false;      // check() ran to its end
  std::optional<std::string> starting_point;  // set for an empty store
  std::vector<std::string> missing_references;  // at most a few, for the log

  bool adopted_any() const {
    return orders_adopted + returns_adopted + products_adopted + products_behind + looked_up > 0;
  }
  // One paragraph for logs and `recover-store`.
  std::string describe() const;
};

class StoreRebuild {
 public:
  // The catalog, where push_products runs: its products are adopted too.
  struct Catalog {
    merchant::SourceTables& source;
    merchant::PulledTables& pulled;  // the SKU map, variant_sync
    api::ApiVersion version;
  };
  StoreRebuild(merchant::SyncResults& results, CheckpointStore& store, OutboundLedger& ledger,
               std::optional<Catalog> catalog = std::nullopt);

  // Step 1; call before the intake reads the starting point. Throws MerchantDatabaseError or
  // SQLite::Exception (nothing of a failed page is kept).
  void adopt(const std::optional<std::string>& orders_since);
  // Step 2: never throws for a failed request (logged; what was adopted stays adopted). A store
  // behind the result tables first waits `quiet` (the request timeout): the process that used the
  // newer store may have died just now with requests under way, which a lookup made at once would
  // not find yet. (An empty store waits only when it queued lookups: any other create it sends has no
  // result row, so was never announced, so never sent.)
  boost::asio::awaitable<void> check(api::ApiClient& client, api::ApiVersion version, const bool& stopping,
                                     std::chrono::milliseconds quiet);

  const RebuildSummary& summary() const { return summary_; }

 private:
  struct Adopted {
    merchant::SourceKind kind;
    std::int64_t remote_id;
    std::string reference_id;
    std::string content_hash;
    bool cancel_requested;  // the result says cancelled or cancelling
  };
  // A result row without a remote_id whose send may have left.
  struct Unsettled {
    merchant::SourceKind kind;
    std::string reference_id;
    std::string content_hash;
    bool unclear;  // the result says unknown or in_flight (else pending)
    std::string written_at;  // the result's time: a send it announced left after it
  };
  void adopt_table(merchant::SourceKind kind, std::optional<std::string>& oldest_seen,
                   std::vector<Unsettled>& unsettled);
  // Whether `result` was written from a later state than this ledger holds of it in `kinds`.
  bool behind(std::initializer_list<LedgerKind> kinds, const merchant::SyncResult& result);
  void look_up_unsettled(const std::vector<Unsettled>& unsettled);
  void adopt_products();
  void forget_what_the_provider_holds_if_behind(const merchant::SyncResult& result);

  merchant::SyncResults& results_;
  CheckpointStore& store_;
  OutboundLedger& ledger_;
  std::optional<Catalog> catalog_;
  std::vector<Adopted> adopted_;
  RebuildSummary summary_;
};

}  // namespace fulfillsync::daemon
