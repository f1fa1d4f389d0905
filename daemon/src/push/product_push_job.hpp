#pragma once
// push_products: the catalog (fulfillsync_products with fulfillsync_variants) at the provider,
// each product created once and then kept up to date, over the outbound ledger as orders are
// (push_job.hpp). Each run:
//   1. compares the catalog with the ledger, a page of products at a time, by content hash: the
//      whole catalog at the first run, then only the products the catalog's change order (SQLite:
//      the change log; PostgreSQL: transaction ids, so a late commit is read once it commits) says
//      changed since; without a change order, the whole catalog each pass, so no change can hide
//      behind a clock. A product the provider does not
//      have yet is offered as `product_create` (its POST /product body with its variants); a
//      created product that changed as `product_update` (the version the provider has, and the new
//      one). A version that fails the local rules is rejected with its reasons.
//      A product an operator requeued (`fulfillsyncd retry`) is taken again the same way, whether or
//      not a pass is under way;
//   2. looks up unclear creates by SKU (GET /product?Search=): found, adopted; absent, pending
//      again with the product as it is now. An unclear update is simply pending again: each of its
//      requests sets fields, and its variant creates are preceded by a look at the product's variants;
//   3. sends pending creates, then pending updates, each marked in_flight durably before its first
//      request leaves. An update sends only what changed: PATCH /product/{id} for the product's
//      fields; after GET /product/{id}/variants, POST /product/{id}/variants for SKUs the provider
//      lacks and PATCH /product/{id}/variants for the changed members of the others. A variant
//      removed at the merchant is never deleted at the provider, and a column set NULL is cleared
//      only where the spec makes it nullable (catalog_mapping.hpp): the product's note says what
//      the provider keeps. An update whose base is not known (a product adopted by SKU, or from the
//      result table by a rebuilt store, store_rebuild.hpp) reads the product first (GET /product/{id})
//      and sends what differs from it;
//   4. writes `{prefix}product_sync`.
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "fulfillsync/daemon/mapping/catalog_mapping.hpp"
#include "fulfillsync/merchant/source_tables.hpp"
#include "push/push_job.hpp"

namespace fulfillsync::daemon {

class ProductPushJob final : public PushJob {
 public:
  ProductPushJob(PushContext context, config::JobConfig config, merchant::SourceTables& source);
  std::string_view name() const override { return "push_products"; }
  boost::asio::awaitable<JobRun> run() override;
  int backlog() override;
  // Whether a run reads only what changed (the catalog keeps a change order and has been compared
  // whole once): a word that the source tables changed is then worth a run.
  bool follows_changes() const { return compared_through_.has_value(); }

 private:
  // Step 1: up to a few pages of the catalog compared with the ledger, or the products changed
  // since the last comparison; whether more wait.
  bool compare_catalog();
  bool compare_changes();
  // Offers the rows whose version the ledger does not hold (in one ledger batch).
  void compare(const std::vector<merchant::ProductRow>& rows);
  // Compares `keys` and the held versions (held_) as the catalog has them now, holding again those
  // whose send is still under way. Held versions stay held when that fails: no position leads back
  // to them.
  void compare_with_held(std::set<std::string> keys);
  // Offers the held versions again: whether any is queued.
  bool offer_held();
  // Products an operator requeued (`retry`: their rejected entries forgot their versions), taken
  // again as the catalog has them; whether more wait.
  bool retake_requeued();
  // Offers one product's current version (in the caller's ledger batch).
  void take(const merchant::ProductRow& row);
  boost::asio::awaitable<void> reconcile(JobRun& run);
  boost::asio::awaitable<void> send_creates(JobRun& run);
  boost::asio::awaitable<void> send_updates(JobRun& run);
  void record_create(const LedgerEntry& entry, const api::Answer<api::Product>& answer, JobRun& run);
  struct PlannedUpdate;
  // The requests of one update, the first marked by `before_send`: the outcome of the first that
  // failed, or of the last.
  // (An update whose base is not known reads the provider first, and keeps the changes it found in `planned`.)
  boost::asio::awaitable<api::Outcome> update(PlannedUpdate& planned, api::BeforeSend before_send);
  void record_update(const PlannedUpdate& planned, const api::Outcome& outcome, JobRun& run);
  // The update entry's note: what the provider keeps that the merchant no longer has (counted).
  void note_what_the_provider_keeps(const std::string& key, const ProductChanges& changes);
  std::string failpoint_name(std::string_view step) const;

  merchant::SourceTables& source_;
  // The whole pass over the catalog under way: the change order's position when it began (nothing
  // without one), and the last product compared.
  bool in_pass_ = false;
  std::optional<std::string> pass_position_;
  std::string pass_after_;
  // Where the changes not compared yet begin, once a whole pass has ended (nothing before, or
  // without a change order). Kept in memory: a start compares the whole catalog once.
  std::optional<std::string> compared_through_;
  // Products whose new version waited for a send to settle: compared again at the next run.
  std::set<std::string> held_;
};

}  // namespace fulfillsync::daemon
