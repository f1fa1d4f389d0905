// merchant.timezone changed on an installation that has read rows (sync_fixture.hpp): naive
// updated_at values then name other instants, and rows written since must not fall behind the saved
// read position. `check-config` names the zone and warns of the change before the restart does.
#include "sync_fixture.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;

class SourceTimeZoneTest : public SyncFixture {};

// The shop's server was on UTC, then moves to Asia/Tokyo (UTC+9) and the zone is set to match. Its
// next order, written at 13:00 Tokyo wall time (04:00Z), is eight hours before the position saved at
// 12:00Z; the sweep is off, so only going back finds it. The first order is not sent again.
TEST_F(SourceTimeZoneTest, AChangedZoneReadsBackFarEnoughThatNoNaiveRowIsSkipped) {
  start_sandbox();
  drop_change_log();  // with the log, updated_at decides nothing
  write_config("", "", "  reconcile_interval: 0s\n");
  insert_order("TZ-0001", 1, "2025-07-01T12:00:00");
  ASSERT_EQ(once().exit_status, 0);
  ASSERT_EQ(result_column("state", "TZ-0001"), "created");
  EXPECT_THAT(daemon({"check-config"}).stdout_text, HasSubstr("OK    merchant.timezone: UTC (now UTC+00:00)"));

  write_config("", "", "  reconcile_interval: 0s\n  timezone: Asia/Tokyo\n");
  const auto check = daemon({"check-config"});
  EXPECT_THAT(check.stdout_text, HasSubstr("WARN  merchant.timezone: Asia/Tokyo (now UTC+09:00)"));
  EXPECT_THAT(check.stdout_text, HasSubstr("saved under UTC"));
  insert_order("TZ-0002", 2, "2025-07-01T13:00:00");
  const auto after = once();
  ASSERT_EQ(after.exit_status, 0) << after.stderr_text;
  EXPECT_THAT(after.stderr_text, HasSubstr("merchant.timezone is Asia/Tokyo, but the read positions were saved under UTC"));
  EXPECT_EQ(result_column("state", "TZ-0002"), "created") << after.stderr_text;
  EXPECT_EQ(creates().first, 2);

  // Saved with the new zone: the next start does not go back again.
  const auto again = once();
  EXPECT_THAT(again.stderr_text, ::testing::Not(HasSubstr("read positions were saved under")));
  EXPECT_EQ(creates().first, 2);
}

}  // namespace
}  // namespace fulfillsync::testing
