#include "fulfillsync/daemon/cli.hpp"

#include <sstream>

#include <gtest/gtest.h>

#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::daemon {
namespace {

std::optional<CommandLine> parse(std::vector<std::string> args, std::string* error_out = nullptr) {
  std::string error;
  auto line = parse_command_line(args, error);
  if (error_out) *error_out = error;
  return line;
}

TEST(CommandLineTest, RunIsTheDefault) {
  const auto line = parse({});
  ASSERT_TRUE(line);
  EXPECT_EQ(line->command, Command::run);
  EXPECT_EQ(line->config_path, "/etc/fulfillsync/fulfillsync.yaml");
  EXPECT_EQ(line->log_level, std::nullopt);
}

TEST(CommandLineTest, OptionsInEitherForm) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--config", "a.yaml", "--log-level", "debug", "check-config"},
           {"--config=a.yaml", "--log-level=debug", "check-config"},
           {"check-config", "-c", "a.yaml", "-l", "debug"}}) {
    const auto line = parse(args);
    ASSERT_TRUE(line);
    EXPECT_EQ(line->command, Command::check_config);
    EXPECT_EQ(line->config_path, "a.yaml");
    EXPECT_EQ(line->log_level, spdlog::level::debug);
  }
}

TEST(CommandLineTest, UsageErrorsSayWhat) {
  std::string error;
  EXPECT_FALSE(parse({"--config"}, &error));
  EXPECT_EQ(error, "--config needs a value");
  EXPECT_FALSE(parse({"--log-level", "loud"}, &error));
  EXPECT_EQ(error, "'loud' is not a log level: trace, debug, info, warn, error, critical or off");
  EXPECT_FALSE(parse({"sync"}, &error));
  EXPECT_EQ(error, "unknown command 'sync'");
  EXPECT_FALSE(parse({"run", "check-config"}, &error));
  EXPECT_EQ(error, "unexpected argument 'check-config'");
  EXPECT_FALSE(parse({"--configuration=x"}, &error));
  EXPECT_EQ(error, "unknown option '--configuration=x'");
}

TEST(CommandLineTest, OperatorCommands) {
  EXPECT_EQ(parse({"once"})->command, Command::once);
  EXPECT_EQ(parse({"status"})->command, Command::status);
  const auto dry = parse({"--dry-run", "once"});
  ASSERT_TRUE(dry);
  EXPECT_TRUE(dry->dry_run);
  const auto one = parse({"retry", "ORDER-7"});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->command, Command::retry);
  EXPECT_EQ(one->retry_reference, "ORDER-7");
  const auto all = parse({"retry", "--rejected"});
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->retry_rejected);

  std::string error;
  EXPECT_FALSE(parse({"retry"}, &error));
  EXPECT_EQ(error, "retry needs a REFERENCE_ID or --rejected");
  EXPECT_FALSE(parse({"retry", "A", "--rejected"}, &error));
  EXPECT_FALSE(parse({"retry", "A", "B"}, &error));
  EXPECT_EQ(error, "unexpected argument 'B'");
  EXPECT_FALSE(parse({"--dry-run", "status"}, &error));
  EXPECT_EQ(error, "--dry-run goes with run or once");
}

TEST(CommandLineTest, ResyncTakesADateAndMaybeAJob) {
  const auto all = parse({"resync", "--since", "2026-03-01"});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->command, Command::resync);
  EXPECT_EQ(all->resync_since, "2026-03-01");
  EXPECT_EQ(all->resync_job, std::nullopt);
  const auto one = parse({"resync", "--job=pull_returns", "--since=2026-03-01T12:00:00Z"});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->resync_job, "pull_returns");
  EXPECT_EQ(one->resync_since, "2026-03-01T12:00:00Z");

  std::string error;
  EXPECT_FALSE(parse({"resync"}, &error));
  EXPECT_EQ(error, "resync needs --since DATE");
  EXPECT_FALSE(parse({"resync", "--since", "last week"}, &error));
  EXPECT_EQ(error, "--since 'last week' is not a date-time (2026-03-01 or 2026-03-01T12:00:00Z)");
  EXPECT_FALSE(parse({"status", "--since", "2026-03-01"}, &error));
  EXPECT_EQ(error, "unknown option '--since'");
}

TEST(CommandLineTest, EveryCommandOfTheHelpIsInTheReadme) {
  const std::string readme = testing::read_file(testing::source_path("README.md"));
  std::istringstream help(usage_text());
  bool in_commands = false;
  int commands = 0;
  for (std::string line; std::getline(help, line);) {
    if (line == "Commands:") in_commands = true;
    if (line == "Options:") break;
    // "  resync --since DATE [--job NAME]": a command starts at column 2, its text after two spaces.
    if (!in_commands || line.size() < 3 || line.compare(0, 2, "  ") != 0 || line[2] == ' ') continue;
    const std::string command = line.substr(2, line.find("  ", 2) - 2);
    EXPECT_NE(readme.find("\n  " + command), std::string::npos) << "README's command list lacks '" << command << "'";
    ++commands;
  }
  EXPECT_EQ(commands, 9);  // run, once, status, retry (twice), resync, check-config, auth login, upgrade-source
}

TEST(CommandLineTest, UpgradeSourceTakesNoArgument) {
  EXPECT_EQ(parse({"upgrade-source"})->command, Command::upgrade_source);
  std::string error;
  EXPECT_FALSE(parse_command_line({"upgrade-source", "now"}, error));
  EXPECT_EQ(error, "unexpected argument 'now'");
}

TEST(CommandLineTest, OnlineGoesWithCheckConfig) {
  EXPECT_FALSE(parse({"check-config"})->online);
  EXPECT_TRUE(parse({"check-config", "--online"})->online);
  std::string error;
  EXPECT_FALSE(parse({"status", "--online"}, &error));
  EXPECT_EQ(error, "unknown option '--online'");
}

// Every exit status is explained in --help and in the README's table (each is tested where it arises:
// daemon_process_test, exit_status_test, pull_sync_test, push_sync_test).
TEST(CommandLineTest, EveryExitStatusIsDocumented) {
  const std::string readme = testing::read_file(testing::source_path("README.md"));
  const std::string help = usage_text();
  for (const int code : {exit_code::ok, exit_code::usage, exit_code::data_error, exit_code::unavailable,
                         exit_code::software, exit_code::temporary_failure, exit_code::config}) {
    const std::string number = std::to_string(code);
    EXPECT_NE(help.find("\n  " + number + std::string(4 - number.size(), ' ')), std::string::npos) << code;
    EXPECT_NE(readme.find("\n| " + number + " | "), std::string::npos) << code;
  }
}

TEST(CommandLineTest, HelpAndVersionWinOverEverythingElse) {
  EXPECT_EQ(parse({"run", "--help"})->command, Command::help);
  EXPECT_EQ(parse({"-V"})->command, Command::version);
}

}  // namespace
}  // namespace fulfillsync::daemon
