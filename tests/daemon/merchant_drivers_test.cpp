// One end-to-end push, orders, cancels and returns, against each merchant database driver: the same
// test, value-parameterized over the driver (merchant_driver.hpp: a SQLite file; a database of its own
// on a PostgreSQL 15 server the suite starts). The test plays the shop's application with the same SQL
// on either database, and reads the result tables back through the connector, as the daemon wrote them.
#include "fulfillsync/config/loader.hpp"
#include "fulfillsync/merchant/merchant_database.hpp"
#include "merchant_driver.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;

class MerchantDriversTest : public DriverFixture {
 protected:
  // The result tables as the daemon wrote them, read through the connector of the configured driver.
  std::unique_ptr<merchant::MerchantDatabase> results_database() {
    return merchant::open_merchant_database_read_only(config::load_file(config_path).merchant);
  }
};

TEST_P(MerchantDriversTest, OrdersCancelsAndReturnsArriveOnceAndTheirResultsAreWritten) {
  start_sandbox();
  insert_orders("ORD", 40);
  insert_returns("RMA", 5);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;

  const std::set<std::string> cancelled = {"ORD-0003", "ORD-0010", "ORD-0031"};
  execute("UPDATE fulfillsync_orders SET cancel_requested = 1 WHERE reference_id IN ('ORD-0003', 'ORD-0010', "
          "'ORD-0031')");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  result = once();  // nothing left: nothing is sent again
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(creates(), std::make_pair(40L, 5L));

  const auto orders = provider_orders();
  ASSERT_EQ(orders.size(), 40u);
  const auto db = results_database();
  EXPECT_THAT(db->describe(), ::testing::StartsWith(GetParam() == Driver::sqlite ? "sqlite " : "postgresql "));
  for (int i = 1; i <= 40; ++i) {
    const std::string reference = fmt::format("ORD-{:04}", i);
    ASSERT_TRUE(orders.contains(reference)) << reference;
    const api::Order& order = orders.at(reference);
    const bool cancel = cancelled.contains(reference);
    EXPECT_EQ(order.status, cancel ? "Cancelled" : "Processing") << reference;
    EXPECT_EQ(order.order_number, fmt::format("#{}", i));
    ASSERT_EQ(order.products.size(), static_cast<std::size_t>(1 + i % 2)) << reference;
    const auto stored = db->results().read_result(merchant::SourceKind::orders, reference);
    ASSERT_TRUE(stored) << reference;
    EXPECT_EQ(stored->state, cancel ? "cancelled" : "created") << reference;
    EXPECT_EQ(stored->remote_id, order.id) << reference;
    EXPECT_TRUE(stored->remote_created_at) << reference;
  }
  const auto returns = provider_returns();
  ASSERT_EQ(returns.size(), 5u);
  for (int i = 1; i <= 5; ++i) {
    const std::string reference = fmt::format("RMA-{:03}", i);
    ASSERT_TRUE(returns.contains(reference)) << reference;
    EXPECT_EQ(returns.at(reference).tracking_number, fmt::format("1Z{:010}", i));
    const auto stored = db->results().read_result(merchant::SourceKind::returns, reference);
    ASSERT_TRUE(stored) << reference;
    EXPECT_EQ(stored->state, "created");
    EXPECT_EQ(stored->remote_id, returns.at(reference).id);
  }

  // check-config reads the same database and finds it whole.
  const auto check = daemon({"check-config"});
  EXPECT_EQ(check.exit_status, 0) << check.stdout_text << check.stderr_text;
}

// PostgreSQL alone (a SQLite writer holding its transaction blocks every other writer): a transaction
// holds a new order uncommitted for longer than look_back while newer orders are committed and pushed;
// once it commits, its order is pushed, though its updated_at is older than theirs.
class PostgresLateCommitTest : public MerchantDriversTest {};

TEST_P(PostgresLateCommitTest, AnOrderCommittedAfterLookBackIsStillPushed) {
  start_sandbox();
  std::string config = read_file(config_path);
  config.insert(config.find("api:"), "  look_back: 1s\n");
  write_file(config_path, config);

  PostgresShopConnection late(conninfo() + " options='-c search_path=shop'");
  late.exec(fmt::format("BEGIN; {}", order_sql("LATE-0001", 1)));
  std::this_thread::sleep_for(1500ms);  // longer than look_back
  execute(fmt::format("BEGIN; {} {} COMMIT;", order_sql("NEW-0001", 1), order_sql("NEW-0002", 2)));
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  std::this_thread::sleep_for(1500ms);
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  EXPECT_EQ(creates().first, 2);

  late.exec("COMMIT");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  const auto orders = provider_orders();
  EXPECT_EQ(orders.size(), 3u);
  EXPECT_TRUE(orders.contains("LATE-0001"));
  EXPECT_EQ(creates().first, 3);
  EXPECT_EQ(results_database()->results().read_result(merchant::SourceKind::orders, "LATE-0001")->state, "created");
}

// PostgreSQL alone: the daemon LISTENs for the reference triggers' notifications, so a commit is pushed
// at once though every push job's interval is an hour; after the server restarts, the listener
// reconnects and a new commit is again pushed without an interval elapsing, and nothing twice.
class PostgresNotifyTest : public MerchantDriversTest {};

TEST_P(PostgresNotifyTest, ACommitIsPushedAtOnceAndAgainAfterTheServerRestarts) {
  start_sandbox();
  std::string config = read_file(config_path);
  for (const std::string job : {"push_orders: {interval: ", "push_cancels: {interval: ", "push_returns: {interval: "}) {
    config.replace(config.find(job + "50ms"), job.size() + 4, job + "1h");
  }
  write_file(config_path, config);
  // Pushed by the jobs' first runs, at the start.
  execute(fmt::format("BEGIN; {} COMMIT;", order_sql("FIRST-0001", 1)));
  auto daemon = run_in_background();
  ASSERT_TRUE(wait_for_sandbox_count("orders", 1, 20s)) << daemon->stderr_text();
  daemon->wait_for_stderr("listening for changes", 10s);
  std::this_thread::sleep_for(500ms);  // the first runs are over: the jobs rest for an hour

  const auto started = std::chrono::steady_clock::now();
  execute(fmt::format("BEGIN; {} COMMIT;", order_sql("NOTIFIED-0001", 2)));
  ASSERT_TRUE(wait_for_sandbox_count("orders", 2, 5s)) << daemon->stderr_text();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);

  postgres().restart();
  connect_shop();
  ASSERT_TRUE(daemon->wait_for_stderr("listening for changes on channel fulfillsync_changes again", 30s))
      << daemon->stderr_text();
  execute(fmt::format("BEGIN; {} COMMIT;", order_sql("RESTARTED-0001", 3)));
  ASSERT_TRUE(wait_for_sandbox_count("orders", 3, 15s)) << daemon->stderr_text() << postgres().log();

  std::this_thread::sleep_for(1s);  // a second send would have come by now
  const auto orders = provider_orders();
  EXPECT_EQ(orders.size(), 3u);
  for (const char* reference : {"FIRST-0001", "NOTIFIED-0001", "RESTARTED-0001"}) {
    EXPECT_TRUE(orders.contains(reference)) << reference;
  }
  EXPECT_EQ(creates().first, 3);
  daemon->send_signal(SIGTERM);
  EXPECT_TRUE(daemon->wait_for_exit(10s).has_value()) << "the daemon did not stop promptly";
}

INSTANTIATE_TEST_SUITE_P(Drivers, PostgresNotifyTest, ::testing::Values(Driver::postgresql), driver_name);
INSTANTIATE_TEST_SUITE_P(Drivers, PostgresLateCommitTest, ::testing::Values(Driver::postgresql), driver_name);
INSTANTIATE_TEST_SUITE_P(Drivers, MerchantDriversTest, kBothDrivers, driver_name);

}  // namespace
}  // namespace fulfillsync::testing
