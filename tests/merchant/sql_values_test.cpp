// How rows are cut into statements of many rows (sql_values.hpp: statements_of_rows): the sizes
// that keep a write's statement texts few, and a new run wherever a key comes again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sql_values.hpp"

namespace fulfillsync::merchant {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

std::vector<std::vector<Named>> rows_of(const std::vector<std::string>& keys) {
  std::vector<std::vector<Named>> rows;
  for (const std::string& key : keys) rows.push_back({{"id", key}, {"value", 1}});
  return rows;
}

std::vector<std::size_t> sizes(const std::vector<std::span<const std::vector<Named>>>& statements) {
  std::vector<std::size_t> made;
  for (const auto& statement : statements) made.push_back(statement.size());
  return made;
}

constexpr std::string_view kKey[] = {"id"};

TEST(StatementsOfRowsTest, ARunIsCutIntoTheLargestSizesFirst) {
  std::vector<std::string> keys;
  for (int i = 0; i < 150; ++i) keys.push_back(std::to_string(i));
  const auto rows = rows_of(keys);
  // 150 = 64 + 64 + 16 + 4 + 1 + 1
  EXPECT_THAT(sizes(statements_of_rows(rows, kKey)), ElementsAre(64, 64, 16, 4, 1, 1));
  EXPECT_THAT(sizes(statements_of_rows(rows_of({"a"}), kKey)), ElementsAre(1));
  EXPECT_TRUE(statements_of_rows({}, kKey).empty());
}

TEST(StatementsOfRowsTest, AKeyThatComesAgainStartsANewRunAndTheOrderIsKept) {
  const auto rows = rows_of({"a", "b", "c", "a", "d", "d", "e"});
  const auto statements = statements_of_rows(rows, kKey);
  // Runs: a b c | a d | d e
  EXPECT_THAT(sizes(statements), ElementsAre(1, 1, 1, 1, 1, 1, 1));
  std::vector<std::string> order;
  for (const auto& statement : statements) {
    for (const auto& row : statement) order.push_back(*row.front().value.text());
  }
  EXPECT_THAT(order, ElementsAreArray({"a", "b", "c", "a", "d", "d", "e"}));

  std::vector<std::string> keys;
  for (int i = 0; i < 20; ++i) keys.push_back(std::to_string(i));
  keys.push_back("3");  // the 21st row names the 4th again
  for (int i = 20; i < 24; ++i) keys.push_back(std::to_string(i));
  EXPECT_THAT(sizes(statements_of_rows(rows_of(keys), kKey)), ElementsAre(16, 4, 4, 1));
}

TEST(StatementsOfRowsTest, WithoutAKeyRowsAreOneRun) {
  EXPECT_THAT(sizes(statements_of_rows(rows_of({"a", "a", "a", "a", "a"}), {})), ElementsAre(4, 1));
}

TEST(StatementsOfRowsTest, AKeyOfSeveralColumnsTellsRowsApartByAllOfThem) {
  const std::vector<std::vector<Named>> rows = {{{"lot", "L1"}, {"location", 1}},
                                                {{"lot", "L1"}, {"location", 2}},
                                                {{"lot", "L1"}, {"location", 1}}};
  constexpr std::string_view key[] = {"lot", "location"};
  EXPECT_THAT(sizes(statements_of_rows(rows, key)), ElementsAre(1, 1, 1));  // runs: 2 rows | 1
  EXPECT_EQ(key_text(rows[0], key), key_text(rows[2], key));
  EXPECT_NE(key_text(rows[0], key), key_text(rows[1], key));
}

}  // namespace
}  // namespace fulfillsync::merchant
