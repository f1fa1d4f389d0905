#pragma once
// The catalog's rows to the provider's product requests (schema/merchant/README.md, "Catalog"):
// a product with its variants as the `POST /product` body, checked locally against the rules with
// a reason for each problem; and, between two such bodies, what an update of a created product
// sends, and only that. Never throws on bad data.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fulfillsync/api/models/api_version.hpp"
#include "fulfillsync/merchant/source_rows.hpp"

namespace fulfillsync::daemon {

// The `POST /product` body of a row version, or the reasons it cannot be sent (printable; "; "
// between them), e.g. `fulfillsync_variants sku 'TEE-M': customs_value must be a whole number
// before API version 2026-07, found '12.50'`.
struct ProductBody {
  std::optional<std::string> body{};
  std::string problems{};
};
ProductBody product_body(const merchant::ProductRow& row, api::ApiVersion version);

// What an update sends to bring the provider from `base` to `after` (both `POST /product` bodies).
//
// A member the merchant cleared (set NULL, so `after` lacks what `base` has) is cleared only where
// the spec makes it nullable (`T | null`): a product's `name` and `type`, sent as `null`. Every other
// member (`taxonomy`, and a variant's strings and objects) cannot be cleared through the API: it is
// never sent as a made-up value, the provider keeps it, and `kept` says so for the note.
struct ProductChanges {
  std::string product_patch;  // the `PATCH /product/{id}` body; "" when no product field changed
  // New SKUs, each a whole variant object: `POST /product/{id}/variants`.
  std::vector<std::pair<std::string, std::string>> new_variants;
  // Changed variants, each an object of what changed (customs and lot_information member by
  // member; weight and dimension whole, their unit with them), without its id:
  // `PATCH /product/{id}/variants`.
  std::vector<std::pair<std::string, std::string>> changed_variants;
  // SKUs in `base` that `after` no longer has: never deleted at the provider, only noted.
  std::vector<std::string> removed_skus;
  // Members cleared at the merchant that the provider keeps.
  struct Kept {
    std::string sku;     // "" for the product's own member
    std::string member;  // e.g. "gtin", "customs.value", "taxonomy_id"
    std::string value;   // what the provider keeps, as JSON
  };
  std::vector<Kept> kept;

  bool sends_nothing() const { return product_patch.empty() && new_variants.empty() && changed_variants.empty(); }
};
// Nothing when either body does not read as a product (a broken ledger entry).
std::optional<ProductChanges> product_changes(std::string_view base, std::string_view after);

// What the provider holds once the update from `base` to `after` is applied: `after`, with what
// the provider keeps from `base` (the members it cannot clear, the variants it never deletes). The
// base of the product's next update, so that what is kept stays noted. Nothing when either does not read.
std::optional<std::string> applied_version(std::string_view base, std::string_view after);

// The provider's product (`GET /product/{id}`'s answer) as a `POST /product` body to compare `after`
// with, when what the provider holds is not known (a product adopted from the result table after
// its content changed, or found by SKU after a send this ledger forgot): the members `after` has,
// as the provider holds them (a number the provider holds equal is written as `after` writes it, and
// so is a weight or dimension it answers in ounces or inches that is `after`'s in another unit, to
// the provider's rounding), and the SKUs of the provider's variants that `after` lacks. A member `after` lacks is left out:
// the provider's default cannot be told from a value the merchant cleared. Nothing when it does
// not read as a product.
std::optional<std::string> provider_version(std::string_view provider_product, std::string_view after);

// A product_update ledger entry's body: the version the provider has and the one to bring it to.
struct ProductVersions {
  std::string base;   // a `POST /product` body; "" when not known: the provider is read first
  std::string after;  // one too; "" when the new version failed local validation
};
std::string encode_versions(const ProductVersions& versions);
std::optional<ProductVersions> decode_versions(std::string_view body);

// The SKUs of a `POST /product` body's variants, in its order.
std::vector<std::string> variant_skus(std::string_view body);

// The note of what the provider keeps that the merchant no longer has (removed variants, members
// it cannot clear), e.g. "gtin of variant 'TEE-M' was removed at the shop; the provider keeps
// \"0123\"": "" when nothing.
std::string provider_keeps_note(const ProductChanges& changes);

// `{"id": <id>, ...}`: a changed variant's object with the provider's variant id first.
std::string with_variant_id(std::int64_t id, std::string_view changed);

}  // namespace fulfillsync::daemon
