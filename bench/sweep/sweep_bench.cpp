// The reconciliation sweep's cost per open row (bench/README.md, "Change detection: polls and the
// sweep"): N open orders with L lines each, every version already in the ledger (the steady state:
// the sweep finds nothing), compared by SourceIntake's own sweep, as the daemon runs it from a push
// job's poll. Prints the process CPU time of one whole pass and the SQL statements it ran and rows
// they returned, per database, counted by SQLite's trace hook on every connection the process opens.
// The intake reads by the change log, so a poll outside the sweep costs one PRAGMA data_version; the
// same polls without the sweep are measured too, and the difference is the sweep's.
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <algorithm>
#include <map>
#include <vector>
#include <string>
#include <string_view>
#include <thread>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/daemon/push/source_intake.hpp"
#include "fulfillsync/merchant/sqlite_merchant_database.hpp"
#include "fulfillsync/testing/process.hpp"

namespace {

using namespace fulfillsync;
using namespace std::chrono_literals;

// Statements run (each execution once) and rows returned, by database file name.
struct Counts {
  long statements = 0, rows = 0;
};
std::map<std::string, Counts>* g_counts = nullptr;

int on_trace(unsigned type, void* context, void*, void*) {
  if (g_counts == nullptr) return 0;
  Counts& counts = (*g_counts)[static_cast<const char*>(context)];
  if (type == SQLITE_TRACE_STMT) ++counts.statements;
  if (type == SQLITE_TRACE_ROW) ++counts.rows;
  return 0;
}

// Called by SQLite for every connection the process opens (sqlite3_auto_extension).
int trace_connection(sqlite3* db, const char**, const void*) {
  const char* file = sqlite3_db_filename(db, "main");
  static std::map<std::string, std::string> names;  // stable storage for the context pointers
  const std::string path = file == nullptr ? "" : file;
  const std::string& name = names.emplace(path, std::filesystem::path(path).filename().string()).first->second;
  sqlite3_trace_v2(db, SQLITE_TRACE_STMT | SQLITE_TRACE_ROW, on_trace, const_cast<char*>(name.c_str()));
  return SQLITE_OK;
}

double cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

struct Pass {
  double cpu = 0;
  int polls = 0;
  std::map<std::string, Counts> counts;
};

// Polls `intake` as a push job does until the pass ends (the sweep's last page), or `polls` times.
Pass measure(daemon::Intake& intake, int polls) {
  Pass pass;
  g_counts = &pass.counts;
  const double start = cpu_seconds();
  for (;;) {
    const bool more = intake.poll(10);
    ++pass.polls;
    if (polls > 0 ? pass.polls == polls : !more) break;
  }
  pass.cpu = cpu_seconds() - start;
  g_counts = nullptr;
  return pass;
}

void print(std::string_view what, const Pass& pass, long orders) {
  fmt::print("{}: {} polls, {:.1f} ms CPU ({:.2f} µs per open row)\n", what, pass.polls, pass.cpu * 1e3,
             pass.cpu * 1e6 / static_cast<double>(orders));
  for (const auto& [file, counts] : pass.counts) {
    fmt::print("  {}: {} statements, {} rows returned\n", file, counts.statements, counts.rows);
  }
}

}  // namespace

int main(int argc, char** argv) {
  long orders = 10000;
  int lines = 3, runs = 3;
  bool unindexed_lines = false;  // as a view over a shop's own item table without an index on its order
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view name = argv[i];
    if (name == "--orders") orders = std::atol(argv[i + 1]);
    else if (name == "--lines") lines = std::atoi(argv[i + 1]);
    else if (name == "--runs") runs = std::atoi(argv[i + 1]);
    else if (name == "--unindexed-lines") unindexed_lines = std::string_view(argv[i + 1]) == "yes";
    else {
      fmt::print(stderr, "usage: sweep_bench [--orders N] [--lines L] [--runs R] [--unindexed-lines yes]\n");
      return 64;
    }
  }
  spdlog::set_level(spdlog::level::warn);
  sqlite3_auto_extension(reinterpret_cast<void (*)()>(trace_connection));

  testing::TempDir dir;
  {
    SQLite::Database app((dir.path() / "shop.db").string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    app.exec("PRAGMA journal_mode = WAL");
    app.exec(testing::read_file(testing::source_path("schema/merchant/source_tables.sql")));
    app.exec(testing::read_file(testing::source_path("schema/merchant/change_log/0001_change_log.sql")));
    SQLite::Transaction transaction(app);
    SQLite::Statement order(app, "INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, type, "
                                 "recipient_name, recipient_email, address1, city, state, zip_code, country, tags, "
                                 "updated_at) VALUES (?1, ?1, 'Standard', 'DTC', 'Customer ' || ?1, "
                                 "'customer@example.com', '1 Main Street', 'Austin', 'TX', '10001', 'US', NULL, "
                                 "strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 hours'))");
    SQLite::Statement line(app, "INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, "
                                "product_reference_id, product_name, quantity) VALUES (?, ?, 'TSHIRT-L', "
                                "'Organic Cotton T-Shirt L', 1)");
    for (long i = 0; i < orders; ++i) {
      const std::string key = fmt::format("BENCH-{:07}", i);
      for (int n = 1; n <= lines; ++n) {
        line.bind(1, key);
        line.bind(2, n);
        line.exec();
        line.reset();
      }
      order.bind(1, key);
      order.exec();
      order.reset();
    }
    if (unindexed_lines) {
      app.exec("CREATE TABLE lines_copy AS SELECT * FROM fulfillsync_order_lines; DROP TABLE fulfillsync_order_lines; "
               "ALTER TABLE lines_copy RENAME TO fulfillsync_order_lines");
    }
    transaction.commit();
  }
  config::MerchantConfig config;
  config.sqlite.path = dir.path() / "shop.db";
  merchant::SqliteMerchantDatabase db(config);
  daemon::CheckpointStore store(dir.path() / "checkpoint.db");
  daemon::OutboundLedger ledger(store);
  prometheus::Registry registry;
  daemon::SyncMetrics metrics(registry);
  const auto intake = [&](config::Duration reconcile_interval) {
    daemon::SourceIntake<merchant::OrderRow>::Options options;
    options.starting_point = "2020-01-01T00:00:00Z";
    options.reconcile_interval = reconcile_interval;
    return std::make_unique<daemon::SourceIntake<merchant::OrderRow>>(db.source(), store, ledger, metrics, options);
  };
  // Every row into the ledger: the first start reads them (by updated_at, then by the change log).
  {
    auto first = intake(0ms);
    while (first->poll(10)) {
    }
    for (int i = 0; i < 100; ++i) first->poll(10);  // the log's entries deleted once handled, a batch a poll
  }
  fmt::print("{} open orders with {} lines each{}, every version in the ledger; batch_size {}\n", orders, lines,
             unindexed_lines ? " (no index on the lines' order)" : "",
             daemon::SourceIntake<merchant::OrderRow>::Options{}.feed.batch_size);
  for (int run = 1; run <= runs; ++run) {
    auto sweeping = intake(1ms);
    std::this_thread::sleep_for(5ms);
    const Pass sweep = measure(*sweeping, 0);
    auto idle = intake(0ms);
    const Pass polls = measure(*idle, sweep.polls);
    // Of the sweep's CPU, the ledger's part: its lookups as the sweep makes them, a page at a time
    // (OutboundLedger::hashes, one statement per key for the create, one for the cancel).
    Pass lookups;
    g_counts = &lookups.counts;
    const double start = cpu_seconds();
    for (long first = 0; first < orders; first += 250) {
      std::vector<std::string> keys;
      for (long i = first; i < std::min(orders, first + 250); ++i) keys.push_back(fmt::format("BENCH-{:07}", i));
      ledger.hashes(daemon::LedgerKind::order_create, keys);
      ledger.hashes(daemon::LedgerKind::order_cancel, keys);
      ++lookups.polls;
    }
    lookups.cpu = cpu_seconds() - start;
    g_counts = nullptr;
    fmt::print("run {}\n", run);
    print("  one sweep pass (its polls included)", sweep, orders);
    print("  the same polls without the sweep", polls, orders);
    print("  of the sweep, the ledger lookups alone (pages)", lookups, orders);
  }
  return 0;
}
