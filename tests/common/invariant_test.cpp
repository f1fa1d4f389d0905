// As a Release build compiles it: an invariant must not vanish with NDEBUG, as assert does.
#ifndef NDEBUG
#define NDEBUG
#endif
#include "fulfillsync/common/invariant.hpp"

#include <string>

#include <gtest/gtest.h>

namespace fulfillsync {
namespace {

TEST(InvariantDeathTest, ABreachStopsTheProcessWithItsMessageEvenUnderNdebug) {
  const int changed = 0;
  EXPECT_DEATH(FULFILLSYNC_INVARIANT(changed == 1, "row A-1 cannot move to created"),
               "invariant broken: row A-1 cannot move to created \\(changed == 1\\)");
}

TEST(InvariantTest, AHeldInvariantDoesNotEvaluateItsMessage) {
  int messages = 0;
  const auto message = [&] {
    ++messages;
    return std::string("never built");
  };
  FULFILLSYNC_INVARIANT(1 + 1 == 2, message());
  EXPECT_EQ(messages, 0);
}

}  // namespace
}  // namespace fulfillsync
