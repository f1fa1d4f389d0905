#pragma once
// The merchant's database as the daemon sees it, in three faces (schema/merchant/README.md):
//   SourceTables  (source_tables.hpp)  the orders and returns it reads, and how it finds changes;
//   SyncResults   (sync_results.hpp)   the push side's result rows, one per order or return;
//   PulledTables  (pulled_tables.hpp)  what the pull jobs learn: shipments, tracking, returns' progress, lots.
// SQLite and PostgreSQL (merchant.driver): SQL dialect lives in the implementations.
//
// MerchantDatabase bundles the three faces of one open database rather than inheriting them, so an
// implementation is three small classes sharing a connection, and each caller is handed the one
// face it needs and can reach nothing else. The faces live as long as the MerchantDatabase; they
// share one connection, so use them from one thread at a time.
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "fulfillsync/config/config.hpp"
#include "fulfillsync/merchant/database_error.hpp"
#include "fulfillsync/merchant/pulled_tables.hpp"
#include "fulfillsync/merchant/source_tables.hpp"
#include "fulfillsync/merchant/sync_results.hpp"

namespace fulfillsync::merchant {

// The oldest transaction open in the database, as far as the daemon's role can see (PostgreSQL's
// pg_stat_activity shows other roles' transactions only to a role with pg_read_all_stats).
struct OldestTransaction {
  bool visible = true;  // false: other roles' transactions are hidden from this role; `age` means nothing
  std::chrono::milliseconds age{0};  // how long it has been open; 0 when none is
};

class MerchantDatabase {
 public:
  virtual ~MerchantDatabase() = default;

  // What it is, for logs: "sqlite /var/lib/shop/shop.db". Never holds a secret.
  virtual std::string describe() const = 0;

  // Cheap liveness check.
  virtual void ping() = 0;

  // The oldest transaction of another session open now, where a long transaction can commit rows
  // whose updated_at is older than merchant.look_back (PostgreSQL, whose now() is the transaction's
  // start); nothing where that cannot happen (SQLite serializes its writers).
  virtual std::optional<OldestTransaction> oldest_open_transaction() { return std::nullopt; }

  // Where a connection can be lost and opened again (PostgreSQL): `observer` is told of every failure
  // and reopening from now on; it must outlive this database.
  virtual void observe_failures(DatabaseFailureObserver& /*observer*/) {}
  // The server answers again (the change listener connected): a lost connection is opened at the next
  // statement without waiting out the rest of its back-off.
  virtual void reopen_without_delay() {}

  virtual SourceTables& source() = 0;
  virtual SyncResults& results() = 0;
  virtual PulledTables& pulled() = 0;
};

// Opens the configured database and, with manage_result_tables, creates or migrates the result
// tables; without it, checks that they are at the version this daemon writes. Throws
// MerchantDatabaseError when it cannot.
std::unique_ptr<MerchantDatabase> open_merchant_database(const config::MerchantConfig& config);

// Opens the configured database for reading only, for commands that must change nothing
// (`--dry-run`): the file and its directory stay as they were (SQLite: SQLITE_OPEN_READONLY, and no
// -wal or -shm file left behind), the result tables are neither created nor checked, and every
// write throws MerchantDatabaseError. A missing database is an error, never created.
std::unique_ptr<MerchantDatabase> open_merchant_database_read_only(const config::MerchantConfig& config);

}  // namespace fulfillsync::merchant
