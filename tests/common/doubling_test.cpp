#include "fulfillsync/common/doubling.hpp"

#include <gtest/gtest.h>

namespace fulfillsync {
namespace {

using namespace std::chrono_literals;

TEST(Doubling, StartsAtFirstAndDoublesToLongest) {
  constexpr Doubling doubling{1s, 30s};
  EXPECT_EQ(doubling.after(0), 0ms);
  EXPECT_EQ(doubling.after(1), 1s);
  EXPECT_EQ(doubling.after(2), 2s);
  EXPECT_EQ(doubling.after(5), 16s);
  EXPECT_EQ(doubling.after(6), 30s);
  EXPECT_EQ(doubling.after(1'000'000), 30s);  // no overflow however long it fails
}

TEST(Doubling, NextFollowsTheCurrentWait) {
  constexpr Doubling doubling{1min, 15min};
  EXPECT_EQ(doubling.next(0ms), 1min);
  EXPECT_EQ(doubling.next(1min), 2min);
  EXPECT_EQ(doubling.next(8min), 15min);
  EXPECT_EQ(doubling.next(15min), 15min);
}

TEST(Doubling, NextAndAfterAgree) {
  constexpr Doubling doubling{500ms, 30s};
  std::chrono::milliseconds wait{0};
  for (int failures = 1; failures < 20; ++failures) {
    wait = doubling.next(wait);
    EXPECT_EQ(wait, doubling.after(failures)) << failures;
  }
}

}  // namespace
}  // namespace fulfillsync
