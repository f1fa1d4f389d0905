#include "fulfillsync/api/rate_budget.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace fulfillsync::api {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// Runs `acquire` for each priority in order of arrival, recording the order in which slots are granted.
std::vector<std::string> grant_order(RateBudget& budget, asio::io_context& io,
                                     const std::vector<std::pair<std::string, Priority>>& arrivals) {
  std::vector<std::string> granted;
  for (const auto& [name, priority] : arrivals) {
    asio::co_spawn(
        io,
        [&budget, &granted, name = name, priority = priority]() -> asio::awaitable<void> {
          co_await budget.acquire(priority);
          granted.push_back(name);
        },
        asio::detached);
  }
  io.run_for(5s);
  return granted;
}

TEST(RateBudgetTest, GrantsUpToTheLimitPerWindowThenWaits) {
  asio::io_context io;
  RateBudget budget(io.get_executor(), 3, 20s, 300ms);
  const auto started = std::chrono::steady_clock::now();
  const auto granted = grant_order(budget, io, {{"a", Priority::pull}, {"b", Priority::pull}, {"c", Priority::pull},
                                                {"d", Priority::pull}});
  EXPECT_EQ(granted, (std::vector<std::string>{"a", "b", "c", "d"}));
  // The fourth had to wait for the first to leave the window: a lower bound, never an upper one.
  EXPECT_GE(std::chrono::steady_clock::now() - started, 300ms);
}

TEST(RateBudgetTest, PacesABacklogAfterABurstOfASixth) {
  asio::io_context io;
  // 60 a window of 600 ms: a burst of 10, then one every 10 ms.
  RateBudget budget(io.get_executor(), 60, 20s, 600ms);
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::chrono::steady_clock::duration> granted_at;
  for (int i = 0; i < 30; ++i) {
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          co_await budget.acquire(Priority::push);
          granted_at.push_back(std::chrono::steady_clock::now() - started);
        },
        asio::detached);
  }
  io.run_for(5s);
  ASSERT_EQ(granted_at.size(), 30u);
  // Lower bounds only: the k-th slot after the burst is earned k * 10 ms after the start.
  for (std::size_t k = 10; k < granted_at.size(); ++k) {
    EXPECT_GE(granted_at[k], std::chrono::milliseconds(10 * (k - 9)) - 1ms) << "slot " << k << " came early";
  }
}

TEST(RateBudgetTest, PushesGoBeforePullsThatArrivedEarlier) {
  asio::io_context io;
  RateBudget budget(io.get_executor(), 1, 20s, 100ms);
  const auto granted = grant_order(budget, io, {{"first", Priority::pull},
                                                {"pull", Priority::pull},
                                                {"mark", Priority::mark},
                                                {"push", Priority::push}});
  EXPECT_EQ(granted, (std::vector<std::string>{"first", "push", "mark", "pull"}));
}

TEST(RateBudgetTest, AnAgedWaiterIsNotStarved) {
  asio::io_context io;
  // Slots free every 100 ms; a pull that has waited 250 ms outranks newer pushes.
  RateBudget budget(io.get_executor(), 1, 250ms, 100ms);
  std::vector<std::pair<std::string, Priority>> arrivals = {{"pull", Priority::pull}};
  for (int i = 0; i < 20; ++i) arrivals.emplace_back("push" + std::to_string(i), Priority::push);
  arrivals.insert(arrivals.begin(), {"first", Priority::push});
  const auto granted = grant_order(budget, io, arrivals);
  ASSERT_EQ(granted.size(), 22u);
  const auto pull_at = std::find(granted.begin(), granted.end(), "pull") - granted.begin();
  EXPECT_LT(pull_at, 10) << "the pull waited behind every push";
  EXPECT_GT(pull_at, 1) << "pushes go first while the pull is young";
}

TEST(RateBudgetTest, LearnsWhatTheProviderCounted) {
  asio::io_context io;
  RateBudget budget(io.get_executor(), 150);
  EXPECT_EQ(budget.available(), 150);
  budget.observe_remaining(40);  // another client used the same token
  EXPECT_EQ(budget.available(), 40);
  budget.observe_remaining(100);  // the provider counting fewer never loosens ours
  EXPECT_EQ(budget.available(), 40);
}

TEST(RateBudgetTest, APauseHoldsEveryone) {
  asio::io_context io;
  RateBudget budget(io.get_executor(), 100);
  budget.pause_for(300ms);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(grant_order(budget, io, {{"a", Priority::push}}).size(), 1u);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 300ms);
}

}  // namespace
}  // namespace fulfillsync::api
