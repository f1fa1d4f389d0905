// State recovery end to end (sync_fixture.hpp): a checkpoint store restored from an older backup,
// deleted, or corrupted, with the merchant application writing meanwhile. In every case each
// eligible order exists once at the provider, each cancel is applied once, no create is refused as
// a duplicate, and the result tables say what is true.
#include <fstream>

#include "sync_fixture.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class RecoveryTest : public SyncFixture {
 protected:
  std::filesystem::path store() const { return dir / "checkpoint.db"; }

  // A consistent copy of the store, as `sqlite3 checkpoint.db ".backup FILE"` takes it.
  void back_up_store(const std::filesystem::path& to) {
    SQLite::Database db(store().string(), SQLite::OPEN_READONLY);
    db.backup(to.c_str(), SQLite::Database::Save);
  }

  // The daemon stopped, `from` is put in place of the store.
  void restore_store(const std::filesystem::path& from) {
    for (const char* side : {"-wal", "-shm"}) std::filesystem::remove(store().string() + side);
    std::filesystem::copy_file(from, store(), std::filesystem::copy_options::overwrite_existing);
  }

  void delete_store() {
    for (const char* side : {"", "-wal", "-shm"}) std::filesystem::remove(store().string() + side);
  }

  void expect_cancelled_once(const std::set<std::string>& cancelled) {
    const auto processed = cancels_processed();
    for (const auto& reference : cancelled) {
      EXPECT_EQ(processed.contains(reference) ? processed.at(reference) : 0, 1) << reference;
      EXPECT_EQ(result_column("remote_status", reference), "Cancelled") << reference;
      EXPECT_THAT(result_column("note", reference), Not(HasSubstr("never sent"))) << reference;
    }
  }
};

// The steps: 100 orders synced, a backup taken, 100 more synced, one of the later ones
// cancelled at the merchant; the older backup restored, then once, resync, once. The ledger of the
// backup has never heard of the cancelled order, which the provider has.
TEST_F(RecoveryTest, ACancelAfterAnOlderBackupIsRestoredReachesTheProvider) {
  start_sandbox();
  insert_orders("OLD", 100);
  auto result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  back_up_store(dir / "backup.db");

  {
    SQLite::Transaction transaction(*merchant);
    for (int i = 1; i <= 100; ++i) insert_order(fmt::format("NEW-{:04}", i), i);
    transaction.commit();
  }
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  request_cancel("NEW-0042");

  restore_store(dir / "backup.db");
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  result = daemon({"resync", "--since", "2020-01-01T00:00:00Z"});
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;
  result = once();
  ASSERT_EQ(result.exit_status, 0) << result.stderr_text;

  expect_orders_delivered("OLD", 100);
  expect_orders_delivered("NEW", 100, {"NEW-0042"});
  expect_cancelled_once({"NEW-0042"});
  EXPECT_EQ(creates().first, 200);
}

}  // namespace
}  // namespace fulfillsync::testing
