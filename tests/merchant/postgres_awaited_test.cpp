// PostgresConnection's awaited batches (run_in_one_round_trip_async) against a real PostgreSQL 15
// server: the event loop serves others while the server works, a blocking statement in between
// reads the batch under way to its end first, batches take turns, and failures are the blocking
// batch's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "postgres_fixture.hpp"

namespace fulfillsync::merchant {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class PostgresAwaitedTest : public PostgresMerchantTest {
 protected:
  void SetUp() override {
    PostgresMerchantTest::SetUp();
    if (IsSkipped()) return;
    app->exec("CREATE TABLE fulfillsync.awaited_rows (n int PRIMARY KEY)");
  }

  // A batch that inserts `rows` into awaited_rows, each after `sleep` seconds on the server. (Callers
  // name their vector first: GCC 12 mis-destroys a temporary built inside co_await.)
  asio::awaitable<std::vector<int>> insert(std::vector<int> rows, const char* sleep = "0") {
    std::vector<PostgresConnection::Statement> statements;
    for (const int n : rows) {
      statements.push_back({"inserting", "INSERT INTO fulfillsync.awaited_rows (n) SELECT $1::int FROM pg_sleep($2::float8)",
                            {std::to_string(n), sleep}});
    }
    co_return co_await connection->run_in_one_round_trip_async(std::move(statements));
  }

  asio::io_context io;
};

TEST_F(PostgresAwaitedTest, TheLoopGoesOnWhileTheServerWorks) {
  std::optional<std::vector<int>> changed;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::vector<int> rows{1, 2};
        changed = co_await insert(std::move(rows), "0.2");
      },
      asio::detached);
  // What the loop did while the batch was under way.
  int ticks_meanwhile = 0;
  asio::steady_timer tick(io);
  std::function<void()> next_tick = [&] {
    tick.expires_after(20ms);
    tick.async_wait([&](const boost::system::error_code&) {
      if (changed) return;
      ++ticks_meanwhile;
      next_tick();
    });
  };
  next_tick();
  const std::uint64_t before = connection->round_trips();
  io.run();
  ASSERT_TRUE(changed);
  EXPECT_THAT(*changed, ElementsAre(1, 1));
  EXPECT_GE(ticks_meanwhile, 5);  // 400 ms of the server's sleeping, a tick each 20 ms
  EXPECT_EQ(connection->round_trips() - before, 1U);
  EXPECT_EQ(app->exec("SELECT count(*) FROM fulfillsync.awaited_rows"), "2");
}

TEST_F(PostgresAwaitedTest, ABlockingStatementMeanwhileReadsTheBatchToItsEndFirst) {
  std::optional<std::vector<int>> changed;
  std::string counted;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::vector<int> rows{1, 2, 3};
        changed = co_await insert(std::move(rows), "0.1");
      },
      asio::detached);
  // Runs once the batch is sent and its awaiter waits for the answer.
  asio::post(io, [&] {
    counted = connection->run("counting", "SELECT count(*) FROM fulfillsync.awaited_rows").text(0, 0);
  });
  io.run();
  EXPECT_EQ(counted, "3");  // after the batch's COMMIT, on the same connection
  ASSERT_TRUE(changed);
  EXPECT_THAT(*changed, ElementsAre(1, 1, 1));
}

// A batch whose statement fails leaves its transaction aborted on the server (the pipeline skips
// its COMMIT). A blocking statement that comes before the batch's awaiter resumes reads the batch to
// its end, and runs after that transaction is rolled back, not in it.
TEST_F(PostgresAwaitedTest, ABlockingStatementMeanwhileRunsAfterAFailedBatchIsRolledBack) {
  app->exec("INSERT INTO fulfillsync.awaited_rows VALUES (1)");
  std::string failure, counted, counting_failure;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        try {
          std::vector<int> rows{2, 1};  // 1 is there already
          co_await insert(std::move(rows), "0.1");
        } catch (const MerchantDatabaseError& e) {
          failure = e.what();
        }
      },
      asio::detached);
  asio::post(io, [&] {
    try {
      counted = connection->run("counting", "SELECT count(*) FROM fulfillsync.awaited_rows").text(0, 0);
    } catch (const MerchantDatabaseError& e) {
      counting_failure = e.what();
    }
  });
  io.run();
  EXPECT_THAT(failure, HasSubstr("duplicate key"));
  EXPECT_EQ(counting_failure, "");
  EXPECT_EQ(counted, "1");
  EXPECT_EQ(connection->run("reading", "SELECT count(*) FROM fulfillsync.awaited_rows").text(0, 0), "1");
}

TEST_F(PostgresAwaitedTest, BatchesTakeTurnsAndAFailedOneRollsBackAlone) {
  std::optional<std::vector<int>> first, third;
  std::string second_failure;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::vector<int> rows{1, 2};
        first = co_await insert(std::move(rows), "0.05");
      },
      asio::detached);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        try {
          std::vector<int> rows{3, 1};  // 1 is the first batch's: the whole batch is refused
          co_await insert(std::move(rows));
        } catch (const MerchantDatabaseError& e) {
          second_failure = e.what();
        }
      },
      asio::detached);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::vector<int> rows{4};
        third = co_await insert(std::move(rows));
      },
      asio::detached);
  io.run();
  ASSERT_TRUE(first);
  ASSERT_TRUE(third);
  EXPECT_THAT(second_failure, HasSubstr("duplicate key"));
  EXPECT_THAT(second_failure, HasSubstr("inserting"));
  EXPECT_EQ(app->exec("SELECT string_agg(n::text, ',' ORDER BY n) FROM fulfillsync.awaited_rows"), "1,2,4");
}

TEST_F(PostgresAwaitedTest, ALostConnectionFailsTheBatchAndTheNextStatementReopensIt) {
  std::string failure;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        try {
          std::vector<int> rows{1};
          co_await insert(std::move(rows), "5");
        } catch (const MerchantDatabaseError& e) {
          failure = e.what();
        }
      },
      asio::detached);
  asio::steady_timer kill(io, 200ms);
  kill.async_wait([&](const boost::system::error_code&) {
    app->exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
              "WHERE query LIKE 'INSERT INTO fulfillsync.awaited%'");
  });
  io.run();
  EXPECT_THAT(failure, HasSubstr("inserting"));
  EXPECT_EQ(connection->run("reading", "SELECT count(*) FROM fulfillsync.awaited_rows").text(0, 0), "0");
}

}  // namespace
}  // namespace fulfillsync::merchant
