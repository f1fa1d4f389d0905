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

// Cleared at the merchant: `type` is nullable in the spec (sent as null); the taxonomy, a variant's
// gtin and a customs member are not (kept at the provider, noted, never sent). What the provider
// holds afterwards keeps them, so the next update notes them again and still sends nothing for them.
TEST(CatalogMappingTest, AClearedMemberIsSentAsNullOnlyWhereTheSpecAllowsIt) {
  const std::string base =
      R"({"name":"Mug","type":"Kitchen","taxonomy_id":11,"variants":[{"sku":"M-1","name":"Mug","gtin":"0123456789012",)"
      R"("weight":{"weight":1,"unit":"lb"},"customs":{"value":12,"currency":"USD"}},{"sku":"M-2","name":"Big mug"}]})";
  const std::string after =
      R"({"name":"Mug","variants":[{"sku":"M-1","name":"Mug","weight":{"weight":1,"unit":"lb"},)"
      R"("customs":{"currency":"USD"}}]})";
  const auto changes = product_changes(base, after);
  ASSERT_TRUE(changes);
  EXPECT_EQ(changes->product_patch, R"({"type":null})");
  EXPECT_TRUE(changes->changed_variants.empty());
  ASSERT_EQ(changes->kept.size(), 3u);
  EXPECT_EQ(changes->kept[0].member, "taxonomy_id");
  EXPECT_EQ(changes->kept[1].member, "gtin");
  EXPECT_EQ(changes->kept[1].sku, "M-1");
  EXPECT_EQ(changes->kept[2].member, "customs.value");
  const std::string note = provider_keeps_note(*changes);
  EXPECT_THAT(note, HasSubstr("'M-2'"));
  EXPECT_THAT(note, HasSubstr("taxonomy_id was removed at the shop; the provider keeps 11"));
  EXPECT_THAT(note, HasSubstr(R"(gtin of variant 'M-1' was removed at the shop; the provider keeps "0123456789012")"));
  EXPECT_THAT(note, HasSubstr("customs.value of variant 'M-1' was removed at the shop; the provider keeps 12"));

  const auto held = applied_version(base, after);
  ASSERT_TRUE(held);
  EXPECT_EQ(*held, R"({"name":"Mug","taxonomy_id":11,"variants":[{"sku":"M-1","name":"Mug","gtin":"0123456789012",)"
                   R"("weight":{"weight":1,"unit":"lb"},"customs":{"value":12,"currency":"USD"}},)"
                   R"({"sku":"M-2","name":"Big mug"}]})");
  const auto again = product_changes(*held, after);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->sends_nothing());
  EXPECT_EQ(provider_keeps_note(*again), note);
  // A weight sent whole: only when one of its members changed.
  const std::string heavier = R"({"name":"Mug","variants":[{"sku":"M-1","name":"Mug","weight":{"weight":2,"unit":"lb"}}]})";
  EXPECT_THAT(product_changes(*held, heavier)->changed_variants,
              ElementsAre(Pair("M-1", R"({"weight":{"weight":2,"unit":"lb"}})")));
}

// What the provider holds, read when the ledger does not know it, compared member by member with what
// the merchant sends: the provider's defaults for members the merchant leaves out are not changes.
TEST(CatalogMappingTest, TheProviderVersionHoldsTheMembersTheMerchantSends) {
  const std::string provider =
      R"({"id":5,"name":"Mug","type":"Regular","user_id":1,"taxonomy":{"id":11,"name":"Mugs"},"variants":[)"
      R"({"id":50,"name":"Mug","sku":"M-1","gtin":"1","upc":"","status":"Active","weight":{"unit":"oz","weight":8.0},)"
      R"("customs":{"country_code_of_origin":"US","value":12.0,"is321_eligible":false},"dimension":{"height":2,"length":6}},)"
      R"({"id":51,"name":"Old","sku":"M-0","status":"Active"}]})";
  const std::string after =
      R"({"name":"Mug","taxonomy_id":11,"variants":[{"sku":"M-1","name":"Mug","gtin":"2","weight":{"weight":8,)"
      R"("unit":"oz"},"customs":{"value":12}},{"sku":"M-3","name":"New"}]})";
  const auto held = provider_version(provider, after);
  ASSERT_TRUE(held);
  EXPECT_EQ(*held, R"({"name":"Mug","taxonomy_id":11,"variants":[{"sku":"M-1","name":"Mug","gtin":"1","weight":)"
                   R"({"weight":8,"unit":"oz"},"customs":{"value":12}},{"sku":"M-0"}]})");
  const auto changes = product_changes(*held, after);
  ASSERT_TRUE(changes);
  EXPECT_EQ(changes->product_patch, "");
  EXPECT_THAT(changes->changed_variants, ElementsAre(Pair("M-1", R"({"gtin":"2"})")));
  EXPECT_THAT(changes->new_variants, ElementsAre(Pair("M-3", R"({"sku":"M-3","name":"New"})")));
  EXPECT_THAT(changes->removed_skus, ElementsAre("M-0"));
  EXPECT_TRUE(changes->kept.empty());
  EXPECT_FALSE(provider_version("[]", after));
}

// The provider answers weights in ounces and dimensions in inches: a variant sent in grams and
// centimetres reads back converted (and perhaps rounded), and is not a change; a changed one is sent.
TEST(CatalogMappingTest, AWeightOrSizeAnsweredInAnotherUnitIsNotAChange) {
  const std::string provider =
      R"({"id":5,"name":"Box","variants":[)"
      R"({"id":50,"sku":"B-1","name":"Box","weight":{"unit":"oz","weight":17.636996772429848},)"
      R"("dimension":{"height":3.937007874015748,"is_locked":false,"length":11.811023622047244,"source":"Merchant",)"
      R"("unit":"in","width":7.874015748031496}},)"
      R"({"id":51,"sku":"B-2","name":"Lid","weight":{"unit":"oz","weight":35.27},"dimension":{"length":0.39,"unit":"in"}},)"
      R"({"id":52,"sku":"B-3","name":"Tape","weight":{"unit":"oz","weight":1.76},"dimension":{"length":39.37,"unit":"in"}}]})";
  const std::string after =
      R"({"name":"Box","variants":[)"
      R"({"sku":"B-1","name":"Box","weight":{"weight":500,"unit":"g"},"dimension":{"length":30,"width":20,"height":10,"unit":"cm"}},)"
      R"({"sku":"B-2","name":"Lid","weight":{"weight":1,"unit":"kg"},"dimension":{"length":10,"unit":"mm"}},)"
      R"({"sku":"B-3","name":"Tape","weight":{"weight":51,"unit":"g"},"dimension":{"length":1.1,"unit":"m"}}]})";
  const auto held = provider_version(provider, after);
  ASSERT_TRUE(held);
  const auto changes = product_changes(*held, after);
  ASSERT_TRUE(changes);
  // B-1 as the sandbox converts it, B-2 rounded to hundredths; B-3 is 50 g and 1 m at the provider.
  EXPECT_THAT(changes->changed_variants,
              ElementsAre(Pair("B-3", R"({"weight":{"weight":51,"unit":"g"},"dimension":{"length":1.1,"unit":"m"}})")));
  EXPECT_TRUE(changes->kept.empty());
}

TEST(CatalogMappingTest, AnUpdatesVersionsReadBack) {
  const ProductVersions versions{.base = R"({"variants":[]})", .after = R"({"name":"A","variants":[]})"};
  const auto read = decode_versions(encode_versions(versions));
  ASSERT_TRUE(read);
  EXPECT_EQ(read->base, versions.base);
  EXPECT_EQ(read->after, versions.after);
  EXPECT_EQ(decode_versions(encode_versions({.base = versions.base, .after = ""}))->after, "");
  EXPECT_EQ(decode_versions(encode_versions({.base = "", .after = versions.after}))->base, "");  // not known
}

}  // namespace
}  // namespace fulfillsync::daemon
