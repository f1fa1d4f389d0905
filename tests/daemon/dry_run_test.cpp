// `fulfillsyncd --dry-run` writes nothing: the merchant database and the checkpoint store stay byte
// for byte as they were, and no file appears or goes, SQLite's -wal and -shm side files included.
#include "sync_fixture.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Every file under `root`, by its relative path, with a hash of its bytes. A -shm file is SQLite's
// memory shared among the connections of the moment (a reader takes a read mark in it): only its
// presence counts. Another process reads the bytes: closing a descriptor of the database in this
// one would drop the locks that the test's own connection holds on it (POSIX record locks).
std::map<std::string, std::string> files_under(const std::filesystem::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const std::string name = std::filesystem::relative(entry.path(), root).string();
    if (entry.is_directory()) {
      files[name + "/"] = "";
    } else if (name.ends_with("-shm")) {
      files[name] = "(shared memory)";
    } else {
      const auto sum = run({"/bin/sh", "-c", "exec sha256sum \"$0\"", entry.path().string()});
      EXPECT_EQ(sum.exit_status, 0) << sum.stderr_text;
      files[name] = sum.stdout_text.substr(0, 64);
    }
  }
  return files;
}

class DryRunTest : public SyncFixture {
 protected:
  RunResult dry_run(const std::string& command = "once") { return daemon({"--dry-run", command}); }

  // Closes the test's own connection, as when the shop's application is not running: SQLite then
  // removes the merchant database's side files, and a dry run that left any would show.
  void shop_disconnects() { merchant.reset(); }

  void expect_unchanged(const std::map<std::string, std::string>& before) {
    EXPECT_EQ(files_under(dir.path()), before);
  }
};

TEST_F(DryRunTest, BeforeTheFirstStartItCreatesNeitherResultTablesNorTheStore) {
  start_sandbox();
  // The store's directory does not exist yet either; the first real start would say so.
  std::string config = read_file(config_path);
  const std::string store = (dir / "checkpoint.db").string();
  config.replace(config.find(store), store.size(), (dir / "state" / "checkpoint.db").string());
  write_file(config_path, config);
  insert_orders("DRY", 3);
  insert_returns("RMA", 1);
  shop_disconnects();
  const auto before = files_under(dir.path());
  ASSERT_TRUE(before.contains("merchant.db"));
  ASSERT_FALSE(before.contains("merchant.db-wal"));

  const auto dry = dry_run();
  EXPECT_EQ(dry.exit_status, 0) << dry.stderr_text;
  EXPECT_THAT(dry.stdout_text, HasSubstr("3 orders would be created"));
  EXPECT_THAT(dry.stdout_text, HasSubstr("1 returns would be created"));
  EXPECT_THAT(dry.stdout_text, HasSubstr("Nothing was sent or written"));
  EXPECT_THAT(dry.stderr_text, HasSubstr("order DRY-0001 would be created"));
  expect_unchanged(before);
  EXPECT_FALSE(std::filesystem::exists(dir / "state"));
  EXPECT_EQ(creates(), std::make_pair(0L, 0L));
}

TEST_F(DryRunTest, AfterARealRunItMovesNoCursorAndChangesNoStore) {
  start_sandbox();
  insert_orders("FIRST", 2);
  ASSERT_EQ(once().exit_status, 0);
  insert_orders("NEXT", 2);
  request_cancel("FIRST-0001");
  shop_disconnects();
  const auto before = files_under(dir.path());
  ASSERT_TRUE(before.contains("checkpoint.db"));
  ASSERT_FALSE(before.contains("checkpoint.db-wal"));

  for (int run = 1; run <= 2; ++run) {  // the second sees the same: nothing moved
    const auto dry = dry_run();
    EXPECT_EQ(dry.exit_status, 0) << dry.stderr_text;
    EXPECT_THAT(dry.stdout_text, HasSubstr("2 orders would be created, 1 cancelled"));
    EXPECT_THAT(dry.stderr_text, HasSubstr("order NEXT-0002 would be created"));
    EXPECT_THAT(dry.stderr_text, Not(HasSubstr("FIRST-0002")));
    expect_unchanged(before);
  }
  EXPECT_EQ(creates().first, 2);
  ASSERT_EQ(once().exit_status, 0);  // the real start still has everything to do
  EXPECT_EQ(creates().first, 4);
}

TEST_F(DryRunTest, BesideTheShopsApplicationItLeavesItsFilesAsTheyWere) {
  start_sandbox();
  insert_orders("LIVE", 2);  // still in the write-ahead log of the shop's open connection
  const auto before = files_under(dir.path());
  ASSERT_TRUE(before.contains("merchant.db-wal"));

  const auto dry = dry_run();
  EXPECT_EQ(dry.exit_status, 0) << dry.stderr_text;
  EXPECT_THAT(dry.stdout_text, HasSubstr("2 orders would be created"));
  expect_unchanged(before);
}

TEST_F(DryRunTest, ItReadsOnlyTheSourceTablesWhateverManagesTheResultTables) {
  start_sandbox();
  insert_orders("SRC", 1);
  shop_disconnects();
  for (const char* manage : {"true", "false"}) {
    write_config("", "", fmt::format("  manage_result_tables: {}\n", manage));
    const auto before = files_under(dir.path());
    const auto dry = dry_run();
    EXPECT_EQ(dry.exit_status, 0) << manage << ": " << dry.stderr_text;
    EXPECT_THAT(dry.stdout_text, HasSubstr("1 orders would be created")) << manage;
    expect_unchanged(before);
  }
}

TEST_F(DryRunTest, AMissingMerchantDatabaseIsAnErrorAndIsNotCreated) {
  start_sandbox();
  shop_disconnects();
  std::filesystem::remove(dir / "merchant.db");
  const auto before = files_under(dir.path());
  const auto dry = dry_run();
  EXPECT_EQ(dry.exit_status, 69) << dry.stderr_text;
  EXPECT_THAT(dry.stderr_text, HasSubstr("merchant.db does not exist"));
  expect_unchanged(before);
}

TEST_F(DryRunTest, StoppedBySigtermItEndsAfterTheBatchAndWritesNothing) {
  start_sandbox();
  // A rollback-journal database, whose exclusive lock holds the dry run at its first read until the
  // signal has arrived.
  merchant->exec("PRAGMA journal_mode = DELETE");
  insert_orders("STOP", 3);
  write_config("", "", "    busy_timeout: 60s\n  batch_size: 1\n");
  const auto before = files_under(dir.path());
  ASSERT_FALSE(before.contains("merchant.db-journal"));

  auto lock = std::make_unique<SQLite::Transaction>(*merchant, SQLite::TransactionBehavior::EXCLUSIVE);
  ChildProcess dry({.argv = {binary_path("fulfillsyncd").string(), "--config", config_path.string(), "--dry-run",
                             "run"},
                    .unset_env = {"FULFILLSYNC_FAILPOINTS"}});
  ASSERT_TRUE(dry.wait_for_stderr("dry run: reading", 20s)) << dry.stderr_text();
  dry.send_signal(SIGTERM);
  lock.reset();  // rolled back: nothing was written

  EXPECT_EQ(dry.wait_for_exit(20s), 75) << dry.stderr_text();
  EXPECT_THAT(dry.stdout_text(), HasSubstr("stopped by a signal before the end: 1 orders would be created"));
  expect_unchanged(before);
}

}  // namespace
}  // namespace fulfillsync::testing
