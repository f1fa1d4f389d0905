#include "fulfillsync/api/retry.hpp"

#include <gtest/gtest.h>

namespace fulfillsync::api {
namespace {

using namespace std::chrono_literals;

TEST(BackoffTest, FullJitterStaysUnderTheGrowingCeilingAndTheCap) {
  const RetryPolicy policy{100ms, 1s, 5};
  std::mt19937_64 random(42);
  for (int retry = 0; retry < 10; ++retry) {
    const auto ceiling = std::min<std::chrono::milliseconds>(1s, 100ms * (1 << retry));
    std::chrono::milliseconds longest{0};
    for (int i = 0; i < 500; ++i) {
      const auto delay = backoff_delay(policy, retry, random);
      ASSERT_GE(delay, 0ms);
      ASSERT_LT(delay, ceiling);
      longest = std::max(longest, delay);
    }
    EXPECT_GT(longest, ceiling / 2) << "the delays spread over the whole range";
  }
}

TEST(RetryBudgetTest, RetriesAreAShareOfRequestsPlusAFloor) {
  RetryBudget budget(0.2, 2);
  const auto now = RetryBudget::Clock::now();
  for (int i = 0; i < 10; ++i) budget.record_request(now);
  int spent = 0;
  while (budget.try_spend(now)) ++spent;
  EXPECT_EQ(spent, 4);  // 2 + 20% of 10
  // A minute later the window has emptied, and the floor is back.
  EXPECT_TRUE(budget.try_spend(now + std::chrono::minutes(2)));
}

}  // namespace
}  // namespace fulfillsync::api
