// The disk work of a bulk push: `once` over a backlog syncs each database a few times per chunk of
// sends, not per handful of sends. Every commit of a write transaction on the checkpoint store (WAL,
// synchronous = FULL) is one fdatasync, and so is each of the merchant's result writes; a commit made
// while the connection is at synchronous = NORMAL is not. Synced commits counted per created order are
// the syncs per order that bound a slow disk's throughput. The daemon
// runs in this process (Service, as `fulfillsyncd once` does) so that SQLite's commit hook sees every
// connection it opens. Work is counted, never timed.
#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "fulfillsync/config/loader.hpp"
#include "service/service.hpp"
#include "sync_fixture.hpp"

namespace fulfillsync::testing {
namespace {

// Synced commits by database file name, of the connections opened while counting.
std::map<std::string, long>* g_commits = nullptr;
// The connections whose commits are not synced now (PRAGMA synchronous = NORMAL, in WAL mode).
std::set<sqlite3*> g_unsynced;

int on_commit(void* db) {
  if (g_commits != nullptr && !g_unsynced.contains(static_cast<sqlite3*>(db))) {
    ++(*g_commits)[std::filesystem::path(sqlite3_db_filename(static_cast<sqlite3*>(db), "main")).filename()];
  }
  return 0;  // go on with the commit
}

int on_statement(unsigned, void*, void* statement, void*) {
  const std::string sql = sqlite3_sql(static_cast<sqlite3_stmt*>(statement));
  sqlite3* db = sqlite3_db_handle(static_cast<sqlite3_stmt*>(statement));
  if (sql.starts_with("PRAGMA synchronous = NORMAL")) g_unsynced.insert(db);
  if (sql.starts_with("PRAGMA synchronous = FULL")) g_unsynced.erase(db);
  return 0;
}

// Called by SQLite for every connection opened once it is registered (sqlite3_auto_extension).
int count_commits(sqlite3* db, const char**, const void*) {
  sqlite3_commit_hook(db, on_commit, db);
  sqlite3_trace_v2(db, SQLITE_TRACE_STMT, on_statement, nullptr);
  return SQLITE_OK;
}

class PushWorkTest : public SyncFixture {};

TEST_F(PushWorkTest, ABacklogIsCommittedAFewTimesPerChunkNotPerSend) {
  constexpr int kOrders = 5000;
  start_sandbox();
  // As push_bench's throughput run: chunks of 500 at 8 in flight, the rate budget unbounded.
  std::string config = read_file(config_path);
  const std::string jobs = "push_orders: {interval: 50ms, batch_size: 100, concurrency: 4}";
  ASSERT_NE(config.find(jobs), std::string::npos);
  write_file(config_path, config.replace(config.find(jobs), jobs.size(),
                                         "push_orders: {interval: 50ms, batch_size: 500, concurrency: 8}"));
  insert_orders("WORK", kOrders);

  std::map<std::string, long> commits;
  g_commits = &commits;
  sqlite3_auto_extension(reinterpret_cast<void (*)()>(count_commits));
  int exit_code = -1;
  {
    daemon::Service service(config_path, config::load_file(config_path), spdlog::level::warn,
                            daemon::Service::Mode::once);
    exit_code = service.run();
  }
  sqlite3_cancel_auto_extension(reinterpret_cast<void (*)()>(count_commits));
  g_commits = nullptr;

  ASSERT_EQ(exit_code, 0);
  SQLite::Statement created(*merchant, "SELECT count(*) FROM fulfillsync_order_sync WHERE state = 'created'");
  ASSERT_TRUE(created.executeStep());
  ASSERT_EQ(created.getColumn(0).getInt(), kOrders);
  // Per chunk of 500 the rows taken in (a commit per 250 read), the marks of what leaves (a commit
  // for about a quarter second of sends, each announced in the result table first), the answers, and
  // the result rows; the pulls in the same run commit a page each. With 5,000 orders: about 120 synced
  // commits of the checkpoint store and 70 of the merchant database, against 674 and 610 when a mark
  // covered the few sends leaving with it. The marks follow the pace of the sends, so the bounds leave
  // room for a slow (sanitized) build.
  const double checkpoint = static_cast<double>(commits["checkpoint.db"]) / kOrders;
  const double results = static_cast<double>(commits["merchant.db"]) / kOrders;
  EXPECT_LE(checkpoint, 0.05) << commits["checkpoint.db"] << " synced commits of the checkpoint store";
  EXPECT_LE(results, 0.04) << commits["merchant.db"] << " commits of the merchant database";
}

}  // namespace
}  // namespace fulfillsync::testing
