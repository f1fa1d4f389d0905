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

  bool sends_nothing() const { return product_patch.empty() && new_variants.empty() && changed_variants.empty(); }
};
// Nothing when either body does not read as a product (a broken ledger entry).
std::optional<ProductChanges> product_changes(std::string_view base, std::string_view after);

// A product_update ledger entry's body: the version the provider has and the one to bring it to.
struct ProductVersions {
  std::string base;   // a `POST /product` body
  std::string after;  // one too; "" when the new version failed local validation
};
std::string encode_versions(const ProductVersions& versions);
std::optional<ProductVersions> decode_versions(std::string_view body);

// The SKUs of a `POST /product` body's variants, in its order.
std::vector<std::string> variant_skus(std::string_view body);

// The note for variants the merchant removed, which the provider keeps.
std::string removed_variants_note(const std::vector<std::string>& skus);

// `{"id": <id>, ...}`: a changed variant's object with the provider's variant id first.
std::string with_variant_id(std::int64_t id, std::string_view changed);

}  // namespace fulfillsync::daemon
