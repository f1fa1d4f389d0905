// PostgresSyncResults and the PostgreSQL result tables' migrations against a real PostgreSQL 15
// server: the same rules as SQLite's (sqlite_merchant_database_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "postgres_fixture.hpp"

namespace fulfillsync::merchant {
namespace {

using PostgresSyncResultsTest = PostgresMerchantTest;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

TEST_F(PostgresSyncResultsTest, MigratesTheResultTablesOnceInTheirSchema) {
  EXPECT_EQ(postgres_result_schema_version(*connection), 4);
  for (const char* table : {"order_sync", "return_sync", "shipments", "shipment_items", "tracking", "inventory_lots",
                            "shipment_timeline", "variant_sync", "product_sync", "schema_migrations"}) {
    EXPECT_EQ(app->exec(fmt::format("SELECT to_regclass('fulfillsync.fulfillsync_{}') IS NOT NULL", table)), "t")
        << table;
  }
  prepare_postgres_result_tables(*connection, true);
  EXPECT_EQ(app->exec("SELECT count(*) FROM fulfillsync.fulfillsync_schema_migrations"), "4");
  // Nothing of the daemon's in the shop's schema.
  EXPECT_EQ(app->exec("SELECT count(*) FROM pg_tables WHERE schemaname = 'shop' AND tablename IN "
                      "('fulfillsync_order_sync', 'fulfillsync_shipments', 'fulfillsync_schema_migrations')"),
            "0");
}

TEST_F(PostgresSyncResultsTest, RefusesResultTablesFromANewerDaemonAndChecksUnmanagedOnes) {
  auto unmanaged = config();
  unmanaged.manage_result_tables = false;
  unmanaged.result_table_prefix = "other_";
  PostgresConnection other(unmanaged);
  try {
    prepare_postgres_result_tables(other, false);
    ADD_FAILURE() << "unmanaged result tables that are not there were accepted";
  } catch (const MerchantDatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("are at schema version 0, this fulfillsync writes version 4"));
  }
  EXPECT_EQ(app->exec("SELECT to_regclass('fulfillsync.other_order_sync') IS NOT NULL"), "f");  // nothing created
  prepare_postgres_result_tables(*connection, false);  // the fixture's, migrated: accepted

  app->exec("INSERT INTO fulfillsync.fulfillsync_schema_migrations (version, name) VALUES (5, 'from the future')");
  try {
    prepare_postgres_result_tables(*connection, true);
    ADD_FAILURE() << "migrated tables from a newer daemon";
  } catch (const MerchantDatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema version 5, newer than this fulfillsync writes (4)"));
  }
}

TEST_F(PostgresSyncResultsTest, ResultWritesAreUpsertsAndNeverOlderOverNewer) {
  const auto t0 = timestamps::parse_iso8601("2026-03-01T10:00:00Z").value();
  std::vector<SyncResult> first = {
      {.reference_id = "O-1", .state = "created", .remote_id = 101, .remote_status = "Processing", .attempts = 1,
       .content_hash = "aa", .updated_at = t0, .remote_created_at = t0},
      {.reference_id = "O-2", .state = "rejected", .last_error = "fulfillsync_orders: city is required, found NULL",
       .attempts = 0, .updated_at = t0},
      {.reference_id = "O-3", .state = "in_flight", .attempts = 1, .updated_at = t0},
  };
  results->write_results(SourceKind::orders, first);
  results->write_results(SourceKind::orders, first);
  EXPECT_THAT(results->count_results_by_state(SourceKind::orders),
              ElementsAre(Pair("created", 1), Pair("in_flight", 1), Pair("rejected", 1)));
  auto stored = results->read_result(SourceKind::orders, "O-1");
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->first_seen_at, t0);
  stored->first_seen_at.reset();
  EXPECT_EQ(*stored, first[0]);

  // Later: O-3 is created, O-1 cancelled. first_seen_at stays; an older replay changes nothing.
  const auto t1 = t0 + std::chrono::seconds(5);
  std::vector<SyncResult> later = {
      {.reference_id = "O-3", .state = "created", .remote_id = 103, .attempts = 1, .updated_at = t1},
      {.reference_id = "O-1", .state = "cancelled", .remote_id = 101, .remote_status = "Cancelled", .attempts = 1,
       .updated_at = t1, .cancel_requested_at = t1, .cancelled_at = t1},
  };
  results->write_results(SourceKind::orders, later);
  results->write_results(SourceKind::orders, first);
  EXPECT_THAT(results->count_results_by_state(SourceKind::orders),
              ElementsAre(Pair("cancelled", 1), Pair("created", 1), Pair("rejected", 1)));
  EXPECT_EQ(results->read_result(SourceKind::orders, "O-1")->first_seen_at, t0);
  EXPECT_EQ(results->read_result(SourceKind::orders, "O-1")->cancelled_at, t1);

  // Once a pull owns remote_status, a later result does not bring the push side's back.
  app->exec("UPDATE fulfillsync.fulfillsync_order_sync SET remote_status = 'Fulfilled', "
            "remote_updated_at = '2026-03-01T11:00:00.000Z' WHERE reference_id = 'O-3'");
  results->write_results(SourceKind::orders,
                         std::vector<SyncResult>{{.reference_id = "O-3", .state = "created", .remote_id = 103,
                                                  .remote_status = "Processing", .note = "a note",
                                                  .updated_at = t1 + std::chrono::seconds(1)}});
  EXPECT_EQ(results->read_result(SourceKind::orders, "O-3")->remote_status, "Fulfilled");
  EXPECT_EQ(results->read_result(SourceKind::orders, "O-3")->note, "a note");

  const auto rejected = results->latest_results(SourceKind::orders, "rejected", 10);
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].last_error, "fulfillsync_orders: city is required, found NULL");
  EXPECT_FALSE(results->read_result(SourceKind::orders, "nope"));

  std::vector<std::string> keys;
  for (const auto& result : results->results_after(SourceKind::orders, "O-1", 10)) keys.push_back(result.reference_id);
  EXPECT_THAT(keys, ElementsAre("O-2", "O-3"));

  results->write_results(SourceKind::returns,
                         std::vector<SyncResult>{{.reference_id = "RMA-1", .state = "created", .remote_id = 9,
                                                  .updated_at = t0}});
  EXPECT_THAT(results->count_results_by_state(SourceKind::returns), ElementsAre(Pair("created", 1)));
  EXPECT_EQ(results->read_result(SourceKind::returns, "RMA-1")->remote_id, 9);
}

// One transaction: a batch with a row the table refuses writes none of them.
TEST_F(PostgresSyncResultsTest, ABatchIsOneTransaction) {
  const auto t0 = timestamps::parse_iso8601("2026-03-01T10:00:00Z").value();
  app->exec("ALTER TABLE fulfillsync.fulfillsync_order_sync ADD CONSTRAINT no_bad CHECK (state <> 'bad')");
  EXPECT_THROW(results->write_results(SourceKind::orders,
                                      std::vector<SyncResult>{{.reference_id = "A", .state = "created", .updated_at = t0},
                                                              {.reference_id = "B", .state = "bad", .updated_at = t0}}),
               MerchantDatabaseError);
  EXPECT_FALSE(results->read_result(SourceKind::orders, "A"));
  // The connection serves the next batch.
  results->write_results(SourceKind::orders,
                         std::vector<SyncResult>{{.reference_id = "A", .state = "created", .updated_at = t0}});
  EXPECT_TRUE(results->read_result(SourceKind::orders, "A"));
}

// A batch of result rows is one round trip to the server, however many rows it holds: BEGIN, the
// upserts and COMMIT go out together, and a row twice in it is written as one after the other.
TEST_F(PostgresSyncResultsTest, ABatchOfResultsIsOneRoundTrip) {
  const auto t0 = timestamps::parse_iso8601("2026-03-01T10:00:00Z").value();
  std::vector<SyncResult> batch;
  for (int i = 0; i < 50; ++i) {
    batch.push_back({.reference_id = fmt::format("O-{}", i), .state = "created", .attempts = 1, .updated_at = t0});
  }
  batch.push_back({.reference_id = "O-0", .state = "in_flight", .attempts = 2, .updated_at = t0 + std::chrono::seconds(1)});
  const std::uint64_t before = connection->round_trips();
  results->write_results(SourceKind::orders, batch);
  EXPECT_EQ(connection->round_trips() - before, 1U);
  EXPECT_EQ(results->count_results_by_state(SourceKind::orders),
            (std::map<std::string, std::int64_t>{{"created", 49}, {"in_flight", 1}}));
  EXPECT_EQ(results->read_result(SourceKind::orders, "O-0")->attempts, 2);
}

// The server ends the connection in the middle of a batch (a restart, a failover): the batch fails
// whole, and the next call opens a new connection.
TEST_F(PostgresSyncResultsTest, AConnectionLostInsideABatchWritesNothingAndTheNextCallReconnects) {
  const auto t0 = timestamps::parse_iso8601("2026-03-01T10:00:00Z").value();
  const std::string pid = connection->run("test", "SELECT pg_backend_pid()::text").text(0, 0);
  try {
    connection->in_transaction("test", PostgresConnection::Transaction::write, [&] {
      PgUpsert upsert(*connection, connection->result_table(SourceKind::orders), std::nullopt);
      upsert.write({{"reference_id", "A"}, {"state", "created"}, {"first_seen_at", t0}, {"updated_at", t0}});
      app->exec(fmt::format("SELECT pg_terminate_backend({})", pid));
      upsert.write({{"reference_id", "B"}, {"state", "created"}, {"first_seen_at", t0}, {"updated_at", t0}});
    });
    ADD_FAILURE() << "the batch went on without its connection";
  } catch (const MerchantDatabaseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("writing"));
  }
  results->write_results(SourceKind::orders,
                         std::vector<SyncResult>{{.reference_id = "C", .state = "created", .updated_at = t0}});
  EXPECT_FALSE(results->read_result(SourceKind::orders, "A"));
  EXPECT_FALSE(results->read_result(SourceKind::orders, "B"));
  EXPECT_TRUE(results->read_result(SourceKind::orders, "C"));
  EXPECT_NE(connection->run("test", "SELECT pg_backend_pid()::text").text(0, 0), pid);
}

// What the connection tells its observer (fulfillsync_merchant_database_errors_total, ..._reopens_total).
struct CountingObserver final : DatabaseFailureObserver {
  void failed(DatabaseFailure failure) override { ++failures[failure]; }
  void reopened() override { ++reopens; }
  std::map<DatabaseFailure, int> failures;
  int reopens = 0;
};

// A connection the server ended between two transactions (a restart, pg_terminate_backend) is found
// before the next statement and opened again; a read that loses it midway runs once more on a new
// one. Each loss is counted, and neither reaches the caller.
TEST_F(PostgresSyncResultsTest, ALostConnectionIsOpenedAgainAndAReadRunsOnceMore) {
  CountingObserver observer;
  connection->observe_failures(observer);
  const auto backend = [&] { return connection->run("test", "SELECT pg_backend_pid()::text").text(0, 0); };
  const std::string first = backend();
  app->exec(fmt::format("SELECT pg_terminate_backend({}, 5000)", first));
  const std::string second = backend();
  EXPECT_NE(second, first);
  EXPECT_EQ(observer.failures[DatabaseFailure::connection_lost], 1);
  EXPECT_EQ(observer.reopens, 1);

  int attempts = 0;
  const std::int64_t counted =
      connection->in_transaction("test", PostgresConnection::Transaction::read_snapshot, [&] {
        if (++attempts == 1) app->exec(fmt::format("SELECT pg_terminate_backend({}, 5000)", backend()));
        return connection->run("test", "SELECT count(*) FROM pg_class").integer(0, 0);
      });
  EXPECT_GT(counted, 0);
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(observer.failures[DatabaseFailure::connection_lost], 2);
  EXPECT_EQ(observer.reopens, 2);
}

// A server that refuses writes as read only (a replica, a server in recovery, or
// default_transaction_read_only): the write fails as `read_only` and is written once writes are taken.
TEST_F(PostgresSyncResultsTest, AWriteRefusedAsReadOnlySaysSoAndGoesThroughOnceTheServerTakesWrites) {
  CountingObserver observer;
  connection->observe_failures(observer);
  const auto t0 = timestamps::parse_iso8601("2026-03-01T10:00:00Z").value();
  const std::vector<SyncResult> rows{{.reference_id = "A", .state = "created", .updated_at = t0}};
  struct ReadOnlyServer {
    explicit ReadOnlyServer(Client& client) : admin(client) {
      admin.exec("ALTER SYSTEM SET default_transaction_read_only = on");
      admin.exec("SELECT pg_reload_conf(), pg_sleep(0.2)");
    }
    ~ReadOnlyServer() {
      admin.exec("ALTER SYSTEM RESET default_transaction_read_only");
      admin.exec("SELECT pg_reload_conf(), pg_sleep(0.2)");
    }
    Client& admin;
  };
  {
    app->exec("SET default_transaction_read_only = off");
    ReadOnlyServer read_only(*app);
    try {
      results->write_results(SourceKind::orders, rows);
      ADD_FAILURE() << "a read-only server took the write";
    } catch (const MerchantDatabaseError& e) {
      EXPECT_EQ(e.failure(), DatabaseFailure::read_only);
      EXPECT_THAT(e.what(), HasSubstr("(SQLSTATE 25006)"));
    }
    EXPECT_EQ(observer.failures[DatabaseFailure::read_only], 1);
  }
  results->write_results(SourceKind::orders, rows);
  EXPECT_TRUE(results->read_result(SourceKind::orders, "A"));
}

TEST_F(PostgresSyncResultsTest, CancelMismatchesAreTheCancelsTheProviderDoesNotShow) {
  const auto t_cancel = timestamps::parse_iso8601("2026-03-02T11:00:00.000Z").value();
  const auto result = [&](const std::string& reference, std::int64_t id, const std::string& state) {
    SyncResult row{.reference_id = reference, .state = state, .remote_id = id, .remote_status = "Processing",
                   .attempts = 1, .updated_at = t_cancel};
    if (state == "cancelled") row.cancel_requested_at = row.cancelled_at = t_cancel;
    return row;
  };
  for (const char* reference : {"C-1", "C-2", "C-3", "C-4", "C-5"}) add_order(reference, "2026-03-02T10:00:00Z");
  app->exec("UPDATE fulfillsync_orders SET cancel_requested = 1 WHERE reference_id <> 'C-5'");
  results->write_results(SourceKind::orders,
                         std::vector<SyncResult>{result("C-1", 101, "cancel_rejected"), result("C-2", 102, "cancelled"),
                                                 result("C-3", 103, "cancelled"), result("C-4", 104, "cancelled"),
                                                 result("C-5", 105, "cancel_rejected")});
  // The provider's statuses as a pull writes them (PulledTables on PostgreSQL comes next).
  app->exec("UPDATE fulfillsync.fulfillsync_order_sync AS r SET remote_status = s.status, remote_updated_at = s.as_of "
            "FROM (VALUES ('C-1', 'Fulfilled', '2026-03-02T10:00:00.000Z'), "
            "('C-2', 'Processing', '2026-03-02T12:00:00.000Z'), ('C-3', 'Processing', '2026-03-02T10:00:00.000Z'), "
            "('C-4', 'Cancelled', '2026-03-02T12:00:00.000Z'), ('C-5', 'Fulfilled', '2026-03-02T10:00:00.000Z')) "
            "AS s (reference_id, status, as_of) WHERE r.reference_id = s.reference_id");
  std::vector<std::string> found;
  for (const auto& row : results->cancel_mismatches(10)) found.push_back(row.reference_id + ":" + *row.remote_status);
  EXPECT_THAT(found, ElementsAre("C-1:Fulfilled", "C-2:Processing"));
  EXPECT_EQ(results->cancel_mismatches(1).size(), 1u);
}

}  // namespace
}  // namespace fulfillsync::merchant
