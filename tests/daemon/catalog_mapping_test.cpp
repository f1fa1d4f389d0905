// The catalog's bodies and what an update sends between two of them (catalog_mapping.hpp).
#include "fulfillsync/daemon/mapping/catalog_mapping.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fulfillsync::daemon {
namespace {

using merchant::Field;
using merchant::ProductRow;
using merchant::VariantRow;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

ProductRow product() {
  ProductRow row;
  row.reference_id = "P-1";
  row.name = Field::of(std::string("Shirt"));
  VariantRow variant;
  variant.sku = Field::of(std::string("S-1"));
  variant.name = Field::of(std::string("Shirt S"));
  variant.customs_value = Field::of(std::string("12.50"));
  variant.customs_currency = Field::of(std::string("USD"));
  variant.weight = Field{.type = Field::Type::real, .real = 7.5};
  row.lines.push_back(variant);
  return row;
}

TEST(CatalogMappingTest, ABodyHasItsVariantsAndCustomsValueByVersion) {
  const ProductBody body = product_body(product(), api::ApiVersion::v2026_07);
  ASSERT_TRUE(body.body) << body.problems;
  EXPECT_EQ(*body.body, R"({"name":"Shirt","variants":[{"sku":"S-1","name":"Shirt S","weight":{"weight":7.5,)"
                        R"("unit":"oz"},"customs":{"value":12.50,"currency":"USD"}}]})");
  const ProductBody older = product_body(product(), api::ApiVersion::v2026_01);
  EXPECT_FALSE(older.body);
  EXPECT_THAT(older.problems, HasSubstr("customs_value must be a whole number before API version 2026-07"));
}

TEST(CatalogMappingTest, EveryProblemIsNamed) {
  ProductRow row = product();
  row.name = Field{};
  row.lines[0].status = Field::of(std::string("Gone"));
  row.lines[0].rows_with_sku = 2;
  const ProductBody body = product_body(row, api::ApiVersion::v2026_07);
  EXPECT_FALSE(body.body);
  EXPECT_THAT(body.problems, HasSubstr("fulfillsync_products: name is required, found NULL"));
  EXPECT_THAT(body.problems, HasSubstr("fulfillsync_variants sku 'S-1': status must be one of Active, Inactive"));
  EXPECT_THAT(body.problems, HasSubstr("sku must be unique among the merchant's variants, found in 2 rows"));
}

TEST(CatalogMappingTest, AnUpdateSendsOnlyWhatChanged) {
  const std::string base =
      R"({"name":"Shirt","variants":[{"sku":"S-1","name":"Shirt S","customs":{"value":12,"currency":"USD"}},)"
      R"({"sku":"S-2","name":"Shirt M"}]})";
  const std::string after =
      R"({"name":"Shirt","type":"Apparel","variants":[{"sku":"S-1","name":"Shirt S","customs":{"value":13,)"
      R"("currency":"USD"}},{"sku":"S-3","name":"Shirt L"}]})";
  const auto changes = product_changes(base, after);
  ASSERT_TRUE(changes);
  EXPECT_EQ(changes->product_patch, R"({"type":"Apparel"})");
  EXPECT_THAT(changes->changed_variants, ElementsAre(Pair("S-1", R"({"customs":{"value":13}})")));
  EXPECT_THAT(changes->new_variants, ElementsAre(Pair("S-3", R"({"sku":"S-3","name":"Shirt L"})")));
  EXPECT_THAT(changes->removed_skus, ElementsAre("S-2"));
  EXPECT_EQ(with_variant_id(7, changes->changed_variants[0].second), R"({"id":7,"customs":{"value":13}})");
  EXPECT_TRUE(product_changes(after, after)->sends_nothing());
  EXPECT_FALSE(product_changes("not json", after));
}

TEST(CatalogMappingTest, AnUpdatesVersionsReadBack) {
  const ProductVersions versions{.base = R"({"variants":[]})", .after = R"({"name":"A","variants":[]})"};
  const auto read = decode_versions(encode_versions(versions));
  ASSERT_TRUE(read);
  EXPECT_EQ(read->base, versions.base);
  EXPECT_EQ(read->after, versions.after);
  EXPECT_EQ(decode_versions(encode_versions({.base = versions.base, .after = ""}))->after, "");
}

}  // namespace
}  // namespace fulfillsync::daemon
