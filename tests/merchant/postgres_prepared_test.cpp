// PostgresConnection's server-side prepared statements against a real PostgreSQL 15 server: each
// text is prepared once a session and run by name (pg_prepared_statements, read from the
// connection's own session, says which and how often), a new session prepares anew, a prepare that
// failed or was skipped is not taken as made, the texts a session prepares are bounded, and a table
// the session grew has its statements planned again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "postgres_fixture.hpp"
#include "postgres_pulled_tables.hpp"

namespace fulfillsync::merchant {
namespace {

using PostgresPreparedTest = PostgresMerchantTest;
using ::testing::HasSubstr;
using ::testing::Not;

// The session's prepared statements whose text contains `part`: how many, and the runs of them all.
struct Prepared {
  std::int64_t statements = 0;
  std::int64_t runs = 0;
};
Prepared prepared(PostgresConnection& connection, const std::string& part) {
  const PgResult found = connection.run(
      "test", "SELECT count(*), coalesce(sum(generic_plans + custom_plans), 0) FROM pg_prepared_statements WHERE "
              "strpos(statement, $1) > 0",
      {part});
  return {.statements = found.integer(0, 0), .runs = found.integer(0, 1)};
}

std::vector<SyncResult> batch(int rows, int round) {
  const auto t0 = timestamps::parse_iso8601("2026-03-01T10:00:00Z").value();
  std::vector<SyncResult> batch;
  for (int i = 0; i < rows; ++i) {
    batch.push_back({.reference_id = fmt::format("O-{}", i),
                     .state = "created",
                     .attempts = round,
                     .updated_at = t0 + std::chrono::seconds(round)});
  }
  return batch;
}

constexpr std::string_view kUpsert = "INSERT INTO \"fulfillsync\".\"fulfillsync_order_sync\"";
constexpr std::string_view kReadOne = "WHERE reference_id = $1";

// The result upserts (in pipelines) and a read of one result (a statement of its own), each run many
// times: each text is prepared once and every run executes it by name. A batch of 10 rows is
// written by statements of 4, 4, 1 and 1 rows (kRowsPerStatement, sql_values.hpp): two texts.
TEST_F(PostgresPreparedTest, EachTextIsPreparedOnceASessionAndRunByName) {
  for (int round = 1; round <= 3; ++round) {
    results->write_results(SourceKind::orders, batch(10, round));
    EXPECT_EQ(results->read_result(SourceKind::orders, "O-1")->attempts, round);
  }
  const Prepared upserts = prepared(*connection, std::string(kUpsert));
  EXPECT_EQ(upserts.statements, 2);
  EXPECT_EQ(upserts.runs, 3 * 4);
  const Prepared reads = prepared(*connection, std::string(kReadOne));
  EXPECT_EQ(reads.statements, 1);
  EXPECT_EQ(reads.runs, 3);
  EXPECT_EQ(connection->run("test", "SELECT count(*) - count(DISTINCT statement) FROM pg_prepared_statements").integer(0, 0), 0);
}

// The server ends the session (a restart, pg_terminate_backend) between runs, and again inside a
// read that runs once more: the new session prepares its texts anew, never running a name it lacks.
TEST_F(PostgresPreparedTest, ANewSessionPreparesItsTextsAnew) {
  const auto backend = [&] { return connection->run("test", "SELECT pg_backend_pid()::text").text(0, 0); };
  results->write_results(SourceKind::orders, batch(5, 1));
  ASSERT_TRUE(results->read_result(SourceKind::orders, "O-1"));
  const std::string first = backend();
  app->exec(fmt::format("SELECT pg_terminate_backend({}, 5000)", first));
  EXPECT_NE(backend(), first);  // a read: run once more on a new session

  results->write_results(SourceKind::orders, batch(5, 2));
  EXPECT_EQ(results->read_result(SourceKind::orders, "O-1")->attempts, 2);
  EXPECT_EQ(prepared(*connection, std::string(kUpsert)).runs, 2);  // 5 rows: a statement of 4, one of 1
  EXPECT_EQ(prepared(*connection, std::string(kReadOne)).runs, 1);

  // Lost inside a snapshot read, after its first statement was prepared: the read runs once more.
  int attempts = 0;
  const std::int64_t counted = connection->in_transaction("test", PostgresConnection::Transaction::read_snapshot, [&] {
    const std::int64_t rows = connection->run("test", "SELECT count(*) FROM pg_class WHERE relkind = $1", {"r"}).integer(0, 0);
    if (++attempts == 1) app->exec(fmt::format("SELECT pg_terminate_backend({}, 5000)", backend()));
    return rows + results->count_results_by_state(SourceKind::orders)["created"];
  });
  EXPECT_EQ(attempts, 2);
  EXPECT_GT(counted, 5);
  EXPECT_EQ(prepared(*connection, "WHERE relkind = $1").runs, 1);
}

// A prepare the server refused (its table missing), and one it skipped after an earlier statement of
// its pipeline failed, are not taken as made: the text is prepared again the next time, and runs.
TEST_F(PostgresPreparedTest, APrepareThatFailedOrWasSkippedIsPreparedAgain) {
  const std::string later = "SELECT count(*) FROM shop.made_later";
  EXPECT_THROW(connection->run("test", later), MerchantDatabaseError);
  app->exec("CREATE TABLE shop.made_later (id integer)");
  EXPECT_EQ(connection->run("test", later).integer(0, 0), 0);

  const std::string counting = "SELECT count(*) FROM shop.made_later WHERE id = $1::integer";
  try {
    connection->in_transaction("test", PostgresConnection::Transaction::write, [&] {
      connection->run_later("test", "SELECT 1 / $1::integer", {"0"});
      connection->run("test", counting, {"1"});
    });
    ADD_FAILURE() << "a division by zero went through";
  } catch (const MerchantDatabaseError& error) {
    EXPECT_THAT(error.what(), HasSubstr("division by zero"));
  }
  EXPECT_EQ(connection->run("test", counting, {"1"}).integer(0, 0), 0);
  EXPECT_EQ(prepared(*connection, "made_later WHERE").runs, 1);
}

// Texts that vary do not grow the session's prepared statements past kMostPrepared: those beyond it
// run unnamed.
TEST_F(PostgresPreparedTest, ASessionPreparesAtMostKMostPreparedTexts) {
  for (std::size_t i = 0; i < PostgresConnection::kMostPrepared + 20; ++i) {
    EXPECT_EQ(connection->run("test", fmt::format("SELECT {}::integer + $1::integer", i), {"1"}).integer(0, 0),
              static_cast<std::int64_t>(i) + 1);
  }
  EXPECT_EQ(connection->run("test", "SELECT count(*) FROM pg_prepared_statements").integer(0, 0),
            static_cast<std::int64_t>(PostgresConnection::kMostPrepared));
}

// A table's column changes type under a prepared statement: the server refuses its next run ("cached
// plan must not change result type"), once; the session is opened afresh and the text prepared anew.
TEST_F(PostgresPreparedTest, AColumnThatChangedTypeFailsOneRunThenIsPreparedAnew) {
  app->exec("CREATE TABLE shop.widened (id integer); INSERT INTO shop.widened VALUES (7)");
  const std::string read = "SELECT id FROM shop.widened";
  EXPECT_EQ(connection->run("test", read).integer(0, 0), 7);
  app->exec("ALTER TABLE shop.widened ALTER COLUMN id TYPE bigint");
  EXPECT_THROW(connection->run("test", read), MerchantDatabaseError);
  const PgResult again = connection->run("test", read);
  EXPECT_EQ(again.integer(0, 0), 7);
  EXPECT_EQ(PQftype(again.raw(), 0), 20U);  // bigint
}

// A connection pooler may DISCARD ALL between its clients: the names the session prepared are gone.
TEST_F(PostgresPreparedTest, NamesTheServerForgotFailOneRunThenArePreparedAnew) {
  app->exec("CREATE TABLE shop.kept (id integer); INSERT INTO shop.kept VALUES (7)");
  const std::string read = "SELECT id FROM shop.kept";
  EXPECT_EQ(connection->run("test", read).integer(0, 0), 7);
  connection->run_script("test", "DEALLOCATE ALL");
  try {
    connection->run("test", read);
    ADD_FAILURE() << "a name the server forgot ran";
  } catch (const MerchantDatabaseError& error) {
    EXPECT_THAT(error.what(), HasSubstr("26000"));
  }
  EXPECT_EQ(connection->run("test", read).integer(0, 0), 7);
  EXPECT_EQ(prepared(*connection, read).statements, 1);
}

// The plan the session's prepared statement whose text contains `part` runs by (EXPLAIN EXECUTE, in
// that session), its lines joined.
std::string plan_of(PostgresConnection& connection, const std::string& part, const std::string& arguments) {
  const PgResult named =
      connection.run("test", "SELECT name FROM pg_prepared_statements WHERE strpos(statement, $1) > 0", {part});
  if (named.rows() != 1) return fmt::format("{} prepared statements hold \"{}\"", named.rows(), part);
  const PgResult plan = connection.run("test", fmt::format("EXPLAIN EXECUTE {}({})", named.text(0, 0), arguments));
  std::string lines;
  for (int r = 0; r < plan.rows(); ++r) lines += plan.text(r, 0) + "\n";
  return lines;
}

// A key lookup prepared while its table held 100 rows runs by the server's generic plan from its
// sixth run: a scan of the whole table, made for the table as it was, and kept however much the
// table grows until an ANALYZE (none here: autovacuum is off for it). Once the session has written
// its 1,000th row to the table, the statement is planned again, by the table's primary key.
TEST_F(PostgresPreparedTest, AStatementPlannedOnASmallTableIsPlannedAgainOnceTheSessionGrewIt) {
  const std::string table = "fulfillsync.fulfillsync_order_sync";
  app->exec(fmt::format("ALTER TABLE {} SET (autovacuum_enabled = false)", table));
  results->write_results(SourceKind::orders, batch(100, 1));
  app->exec(fmt::format("ANALYZE {}", table));

  // The pull's per-row status update, run eight times.
  const std::unique_ptr<PulledTables> pulled = make_postgres_pulled_tables(*connection);
  const auto update_statuses = [&] {
    for (int i = 0; i < 8; ++i) {
      const OrderStatusRecord status{.reference_id = fmt::format("O-{}", i), .remote_id = 1000 + i,
                                     .status = "Processing", .as_of = "2026-03-02T10:00:00Z"};
      pulled->write_shipments(std::span(&status, 1), {});
    }
  };
  const std::string update = "SET remote_status";
  const std::string arguments = "'Processing', '2026-03-02T10:00:00Z', 'O-1'";
  update_statuses();
  EXPECT_THAT(plan_of(*connection, update, arguments), HasSubstr("Seq Scan"));

  results->write_results(SourceKind::orders, batch(5000, 2));
  ASSERT_EQ(results->count_results_by_state(SourceKind::orders)["created"], 5000);
  update_statuses();
  const std::string planned_again = plan_of(*connection, update, arguments);
  EXPECT_THAT(planned_again, HasSubstr("Index Scan"));
  EXPECT_THAT(planned_again, Not(HasSubstr("Seq Scan")));
  EXPECT_EQ(connection->run("test", "SELECT remote_status FROM fulfillsync.fulfillsync_order_sync WHERE reference_id = $1",
                            {"O-7"}).text(0, 0), "Processing");
}

}  // namespace
}  // namespace fulfillsync::merchant
