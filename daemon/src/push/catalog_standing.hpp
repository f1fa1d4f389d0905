#pragma once
// Where each product of the catalog stands against the outbound ledger: what push_products would do
// with the version the catalog holds now. `status` counts the catalog's backlog with it, `--dry-run`
// shows what would be sent with it, and `retry --sku` resolves a SKU to its products by the same
// reading of the catalog (a page of products at a time, as push_products compares them).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/daemon/store/outbound_ledger.hpp"
#include "fulfillsync/merchant/source_tables.hpp"

namespace fulfillsync::daemon {

enum class ProductStanding {
  to_create,        // not created at the provider, and the ledger does not hold this version: offered as a create
  create_queued,    // this version's create waits to be sent
  create_unclear,   // a create was sent without a clear answer: looked up by SKU before anything else
  create_rejected,  // this version's create was rejected (by the local rules or the provider)
  to_update,        // created, and the ledger does not hold this version: offered as an update
  update_queued,    // this version's update waits to be sent
  update_unclear,   // an update was sent without a clear answer: sent again
  update_rejected,  // this version's update was rejected
  up_to_date,       // the provider has this version
};

// The standing of a product whose catalog version has `content_hash`, from what the ledger holds of
// its create and its update (nullptr: nothing). As push_products takes a product (ProductPushJob::take).
ProductStanding standing_of(std::string_view content_hash, const OutboundLedger::HeldVersion* create,
                            const OutboundLedger::HeldVersion* update);

// What the provider holds of a created product, the base an update is computed from: the create's
// body, or the latest update's once applied, with what the provider kept of its base (or, while one
// waits or was rejected, what it started from). "" when not known: a product adopted without its
// version, or an update waiting or rejected after it left (its answer lost, or refused after a first
// request went through), which may have been applied in whole or in part. The update then reads the
// provider first, and sends what differs from it.
std::string update_base(const LedgerEntry& create, const std::optional<LedgerEntry>& update);

// Every product of the catalog with its standing, a page of products at a time. Without a ledger
// (no checkpoint store yet) every product is to_create. Throws MerchantDatabaseError.
void for_each_product(merchant::SourceTables& source, OutboundLedger* ledger,
                      const std::function<void(const merchant::ProductRow&, ProductStanding)>& visit);

// The SKUs of `row`'s variants that `reason` names, quoted or not: the variants a
// rejection concerns.
std::vector<std::string> skus_named(const merchant::ProductRow& row, std::string_view reason);

struct CatalogRejection {
  LedgerKind kind = LedgerKind::product_create;  // product_create or product_update
  std::string reference_id;
  std::vector<std::string> skus;  // those the reason names, when the catalog was read
  std::string at;
  std::string reason;
};

// The catalog's backlog for `status`: products (by their catalog version) not created yet, created
// with changes not sent yet, awaiting an unclear outcome, and rejected, with the latest rejections.
// Read from the catalog compared with the ledger; when the catalog cannot be read (or is not given),
// from the ledger alone (`products` is then nothing and `source_problem` says why).
struct CatalogBacklog {
  std::optional<std::int64_t> products;
  std::int64_t not_created = 0, changes_unsent = 0, unclear = 0, rejected = 0;
  std::vector<CatalogRejection> rejections;  // newest first, at most the number asked for
  std::string source_problem;
  bool nothing_waits() const { return not_created + changes_unsent + unclear + rejected == 0; }
};
CatalogBacklog catalog_backlog(OutboundLedger& ledger, merchant::SourceTables* source, std::size_t rejections_listed);

// Whether the ledger holds anything of the catalog (push_products ran once).
bool ledger_holds_catalog(OutboundLedger& ledger);

// The reference ids of the products with a variant of this SKU (more than one when the SKU is not
// unique, which the rules reject). Reads the whole catalog. Throws MerchantDatabaseError.
std::vector<std::string> products_with_sku(merchant::SourceTables& source, std::string_view sku);

}  // namespace fulfillsync::daemon
