// The disk work of a bulk push: `once` over a backlog syncs each database a few times per chunk of
// sends, not per handful of sends. Every commit of a write transaction on the checkpoint store (WAL,
// synchronous = FULL) is one fdatasync, and so is each of the merchant's result writes; a commit made
// while the connection is at synchronous = NORMAL is not. Synced commits counted per created order are
// the syncs per order that bound a slow disk's throughput. The daemon
// runs in this process (Service, as `fulfillsyncd once` does) so that SQLite's commit hook sees every
// connection it opens. Work is counted, never timed.
#include <sqlite3.h>

#include <signal.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fulfillsync/config/loader.hpp"
#include "fulfillsync/merchant/source_rows.hpp"
#include "service/service.hpp"
#include "sync_fixture.hpp"

namespace fulfillsync::testing {
namespace {

// Synced commits by database file name, of the connections opened while counting.
std::atomic<std::map<std::string, long>*> g_commits = nullptr;
// The connections whose commits are not synced now (PRAGMA synchronous = NORMAL, in WAL mode).
std::set<sqlite3*> g_unsynced;

int on_commit(void* db) {
  std::map<std::string, long>* commits = g_commits.load();
  if (commits != nullptr && !g_unsynced.contains(static_cast<sqlite3*>(db))) {
    ++(*commits)[std::filesystem::path(sqlite3_db_filename(static_cast<sqlite3*>(db), "main")).filename()];
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

// What the checkpoint store's connection did while counting: statements that read or wrote the
// outbound ledger or the tracking marks, and statements compiled (SQLite's authorizer is called only
// while one is).
struct StoreWork {
  std::mutex mutex;
  std::vector<std::string> ledger_statements;
  std::vector<std::string> mark_statements;
  long compiled = 0;
  std::vector<std::string> compiled_sql;  // what the authorizer saw compiled, for the failure message
  // The merchant database's statements that every poll runs, compiled: its PRAGMA data_version and
  // the change log's read (the only statement that reads fulfillsync_changes.reference_id).
  std::vector<std::string> poll_statements_compiled;
  // The merchant database's statements compiled that read the orders' source tables (the rows the
  // change log names and their lines).
  std::vector<std::string> source_reads_compiled;
};
std::atomic<StoreWork*> g_store_work = nullptr;

bool is_file(sqlite3* db, std::string_view name) {
  const char* file = sqlite3_db_filename(db, "main");
  return file != nullptr && std::filesystem::path(file).filename() == name;
}
bool is_checkpoint_store(sqlite3* db) { return is_file(db, "checkpoint.db"); }

int on_store_statement(unsigned, void* db, void* statement, void* text) {
  on_statement(0, nullptr, statement, nullptr);
  StoreWork* work = g_store_work.load();
  if (work == nullptr || !is_checkpoint_store(static_cast<sqlite3*>(db))) return 0;
  // A trigger's run is traced with its statement's text again ("-- TRIGGER ..." is `text`): not a
  // statement of its own.
  if (std::string_view(static_cast<const char*>(text)).starts_with("--")) return 0;
  const std::string sql = sqlite3_sql(static_cast<sqlite3_stmt*>(statement));
  const std::lock_guard lock(work->mutex);
  if (sql.find("outbound_ledger") != std::string::npos) work->ledger_statements.push_back(sql);
  if (sql.find("tracking_marks") != std::string::npos) work->mark_statements.push_back(sql);
  return 0;
}

int on_compile(void* db, int action, const char* first, const char* second, const char*, const char*) {
  StoreWork* work = g_store_work.load();
  if (work == nullptr) return SQLITE_OK;
  const std::string_view object = first ? first : "", detail = second ? second : "";
  if (is_file(static_cast<sqlite3*>(db), "merchant.db") &&
      ((action == SQLITE_PRAGMA && object == "data_version") ||
       (action == SQLITE_READ && object == "fulfillsync_changes" && detail == "reference_id"))) {
    const std::lock_guard lock(work->mutex);
    work->poll_statements_compiled.push_back(fmt::format("{} {}", object, detail));
  }
  if (is_file(static_cast<sqlite3*>(db), "merchant.db") && action == SQLITE_READ &&
      (object == merchant::kOrdersTable || object == merchant::kOrderLinesTable)) {
    const std::lock_guard lock(work->mutex);
    work->source_reads_compiled.push_back(fmt::format("{} {}", object, detail));
  }
  if (!is_checkpoint_store(static_cast<sqlite3*>(db))) return SQLITE_OK;
  // SQLite compiles `PRAGMA synchronous = ...` again each time it runs, cached or not: the price of a
  // commit that is not synced (OutboundLedger::Durability::with_next), far below a sync's.
  if (action == SQLITE_PRAGMA && first != nullptr && std::string_view(first) == "synchronous") return SQLITE_OK;
  const std::lock_guard lock(work->mutex);
  ++work->compiled;
  work->compiled_sql.push_back(fmt::format("action {} {} {}", action, first ? first : "", second ? second : ""));
  return SQLITE_OK;
}

int watch_connection(sqlite3* db, const char**, const void*) {
  sqlite3_commit_hook(db, on_commit, db);
  sqlite3_trace_v2(db, SQLITE_TRACE_STMT, on_store_statement, db);
  sqlite3_set_authorizer(db, on_compile, db);
  return SQLITE_OK;
}

class PushWorkTest : public SyncFixture {
 protected:
  // As push_bench's throughput run: chunks of 500 at 8 in flight, the rate budget unbounded.
  void push_in_chunks_of_500() {
    std::string config = read_file(config_path);
    const std::string jobs = "push_orders: {interval: 50ms, batch_size: 100, concurrency: 4}";
    ASSERT_NE(config.find(jobs), std::string::npos);
    write_file(config_path, config.replace(config.find(jobs), jobs.size(),
                                           "push_orders: {interval: 50ms, batch_size: 500, concurrency: 8}"));
  }

  // `fulfillsyncd once` in this process, `hook` called for every connection it opens; then nothing
  // is counted any more, and all `orders` must be created.
  void push_once_with(int (*hook)(sqlite3*, const char**, const void*), int orders) {
    sqlite3_auto_extension(reinterpret_cast<void (*)()>(hook));
    int exit_code = -1;
    {
      daemon::Service service(config_path, config::load_file(config_path), spdlog::level::warn,
                              daemon::Service::Mode::once);
      exit_code = service.run();
    }
    sqlite3_cancel_auto_extension(reinterpret_cast<void (*)()>(hook));
    g_commits = nullptr;
    g_store_work = nullptr;
    ASSERT_EQ(exit_code, 0);
    SQLite::Statement created(*merchant, "SELECT count(*) FROM fulfillsync_order_sync WHERE state = 'created'");
    ASSERT_TRUE(created.executeStep());
    ASSERT_EQ(created.getColumn(0).getInt(), orders);
  }
};

TEST_F(PushWorkTest, ABacklogIsCommittedAFewTimesPerChunkNotPerSend) {
  constexpr int kOrders = 5000;
  start_sandbox();
  push_in_chunks_of_500();
  insert_orders("WORK", kOrders);

  std::map<std::string, long> commits;
  g_commits = &commits;
  ASSERT_NO_FATAL_FAILURE(push_once_with(count_commits, kOrders));
  // Per chunk of 500 the rows taken in (a commit per 250 read), the marks of what leaves (a commit
  // for about a quarter second of sends, each announced in the result table first), the answers, and
  // the result rows; the pulls in the same run commit a page each. With 5,000 orders: about 120 synced
  // commits of the checkpoint store and 70 of the merchant database, against 674 and 610 when a mark
  // covered the few sends leaving with it. The marks follow the pace of the sends, so the bounds leave
  // room for a slow build: sanitized, with other builds beside it, 258 and 265.
  const double checkpoint = static_cast<double>(commits["checkpoint.db"]) / kOrders;
  const double results = static_cast<double>(commits["merchant.db"]) / kOrders;
  EXPECT_LE(checkpoint, 0.09) << commits["checkpoint.db"] << " synced commits of the checkpoint store";
  EXPECT_LE(results, 0.08) << commits["merchant.db"] << " commits of the merchant database";
}

// The ledger's updates in a bulk push: the marks of the sends leaving together, the creates a commit
// records and the notes that result rows are written are each a statement per page of entries, not
// one per entry. Counted by SQLite's trace hook: 3.75 updates per order when each was a statement
// of its own, under 0.1 in an optimised build. A page is what one commit covers, and that follows
// the pace of the sends: 0.81 in the sanitized Debug build, so the bound leaves room for it.
// Its reads too: whether a cancel waits for an order was a lookup of its own for every send (1.07
// reads per order; 0.08 with the chunk's cancels looked up a page of keys at a time).
TEST_F(PushWorkTest, ABacklogReadsAndUpdatesTheLedgerAPageOfEntriesAtATime) {
  constexpr int kOrders = 2000;
  start_sandbox();
  push_in_chunks_of_500();
  insert_orders("PAGE", kOrders);

  StoreWork work;
  g_store_work = &work;
  ASSERT_NO_FATAL_FAILURE(push_once_with(watch_connection, kOrders));
  long updates = 0, reads = 0;
  for (const std::string& sql : work.ledger_statements) {
    if (sql.starts_with("UPDATE") || sql.starts_with("WITH")) ++updates;
    if (sql.starts_with("SELECT")) ++reads;
  }
  EXPECT_LE(static_cast<double>(updates) / kOrders, 1.5) << updates << " updates of the outbound ledger";
  EXPECT_LE(static_cast<double>(reads) / kOrders, 0.5) << reads << " reads of the outbound ledger";
}

// A bulk push writes no temporary file. A statement that changes many rows inside a transaction (a
// page of ledger transitions) keeps the old images of the pages it changes, in case it fails midway:
// past SQLite's default of 64 KiB in a temporary file, created, written and deleted each time, 24
// files for 2,000 orders. `fulfillsyncd` raises that size (main); run as a process, so that it does,
// with SQLite's temporary directory watched.
TEST_F(PushWorkTest, ABulkPushWritesNoTemporaryFile) {
  constexpr int kOrders = 2000;
  start_sandbox();
  push_in_chunks_of_500();
  insert_orders("TEMP", kOrders);
  const std::filesystem::path temporary = dir.path() / "sqlite-temporary";
  std::filesystem::create_directory(temporary);
  const int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(inotify_add_watch(watch, temporary.c_str(), IN_CREATE), 0);

  const RunResult result = once({"SQLITE_TMPDIR=" + temporary.string()});
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  long created = 0;
  alignas(inotify_event) char events[4096];
  for (ssize_t n; (n = read(watch, events, sizeof events)) > 0;) {
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(events + at);
      ++created;
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
  close(watch);
  EXPECT_EQ(created, 0) << "temporary files created by `once` over " << kOrders << " orders";
  SQLite::Statement synced(*merchant, "SELECT count(*) FROM fulfillsync_order_sync WHERE state = 'created'");
  ASSERT_TRUE(synced.executeStep());
  EXPECT_EQ(synced.getColumn(0).getInt(), kOrders);
}

// `fulfillsyncd run` at a trickle, in process. Once warm (every statement prepared by the first orders),
// one order costs the checkpoint store one synced commit, its mark before it leaves (its intake, its
// answer and the result note ride with the next sync), and nothing is compiled again (nor the
// intakes' statements on the merchant database, which every poll runs, nor its read of the changed
// rows and their lines, whatever their number). Then, with nothing to do, the push jobs' runs ask the
// outbound ledger nothing and mark_tracking's runs the tracking marks nothing (PRAGMA data_version
// and counts kept in memory say nothing changed), and nothing is committed.
TEST_F(PushWorkTest, ATrickleSyncsOncePerOrderAndIdleRunsAskTheLedgerNothing) {
  start_sandbox();
  // No progress report in the counted time: it reads the ledger's counts for the metrics.
  std::string config = read_file(config_path);
  const std::string progress = "progress_interval: 1s";
  ASSERT_NE(config.find(progress), std::string::npos);
  config.replace(config.find(progress), progress.size(), "progress_interval: 1h");
  const std::string last_job = "    push_returns: {interval: 50ms}\n";
  ASSERT_NE(config.find(last_job), std::string::npos);
  write_file(config_path,
             config.replace(config.find(last_job), last_job.size(), last_job + "    mark_tracking: {interval: 50ms}\n"));

  sqlite3_auto_extension(reinterpret_cast<void (*)()>(watch_connection));
  std::atomic<int> exit_code = -1;
  std::thread daemon([&] {
    daemon::Service service(config_path, config::load_file(config_path), spdlog::level::warn,
                            daemon::Service::Mode::run);
    exit_code = service.run();
  });
  const auto stop = [&] {
    ::kill(::getpid(), SIGTERM);  // the Service's signal set takes it
    daemon.join();
    g_store_work = nullptr;
    g_commits = nullptr;
    sqlite3_cancel_auto_extension(reinterpret_cast<void (*)()>(watch_connection));
  };

  // An order with its lines in one transaction, as the shop's application writes it: the daemon
  // never reads the order without them (and rejects it, compiling the rejection's statements).
  const auto insert_order_whole = [&](const std::string& reference, int n) {
    shop_app->exec("BEGIN;" + order_sql(reference, n) + "COMMIT;");
  };
  // Two orders warm every statement: the first may be read by the catch-up after the start, the
  // second by the change log, as every order after it.
  for (const std::string reference : {"WARM-1", "WARM-2"}) {
    insert_order_whole(reference, reference == "WARM-1" ? 1 : 3);
    if (!wait_for_result(reference, "created", 20s)) {
      stop();
      FAIL() << reference << " was not created";
    }
  }
  std::this_thread::sleep_for(500ms);  // their results written, the runs after them done

  StoreWork one_order;
  std::map<std::string, long> one_order_commits;
  g_store_work = &one_order;
  g_commits = &one_order_commits;
  insert_order_whole("ONE-1", 2);
  const bool created = wait_for_result("ONE-1", "created", 20s);
  std::this_thread::sleep_for(300ms);
  g_store_work = nullptr;
  g_commits = nullptr;
  std::this_thread::sleep_for(500ms);

  StoreWork idle;
  std::map<std::string, long> idle_commits;
  g_store_work = &idle;
  g_commits = &idle_commits;
  std::this_thread::sleep_for(1500ms);  // 30 intervals of each push job
  g_store_work = nullptr;
  g_commits = nullptr;
  stop();

  ASSERT_EQ(exit_code, 0);
  ASSERT_TRUE(created);
  EXPECT_LE(one_order_commits["checkpoint.db"], 1) << "synced commits of the checkpoint store for one order";
  EXPECT_EQ(one_order.compiled, 0) << fmt::format("{}", fmt::join(one_order.compiled_sql, "\n"));
  EXPECT_EQ(one_order.poll_statements_compiled, std::vector<std::string>{})
      << "the intakes' statements on the merchant database compiled again";
  EXPECT_EQ(one_order.source_reads_compiled, std::vector<std::string>{})
      << "the reads of the changed rows and their lines compiled again";
  EXPECT_EQ(idle.poll_statements_compiled, std::vector<std::string>{})
      << "the intakes' statements on the merchant database compiled again";
  EXPECT_EQ(idle_commits["checkpoint.db"], 0) << "synced commits of the checkpoint store while idle";
  EXPECT_EQ(idle.compiled, 0) << fmt::format("{}", fmt::join(idle.compiled_sql, "\n"));
  EXPECT_TRUE(idle.ledger_statements.empty())
      << idle.ledger_statements.size() << " statements on the outbound ledger while idle, the first: "
      << (idle.ledger_statements.empty() ? "" : idle.ledger_statements.front());
  EXPECT_TRUE(idle.mark_statements.empty())
      << idle.mark_statements.size() << " statements on the tracking marks while idle, the first: "
      << (idle.mark_statements.empty() ? "" : idle.mark_statements.front());
}

}  // namespace
}  // namespace fulfillsync::testing
