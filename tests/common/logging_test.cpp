#include "fulfillsync/common/logging.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fulfillsync::logging {
namespace {

class JournalStreamTest : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("JOURNAL_STREAM"); }
};

TEST_F(JournalStreamTest, MatchingDeviceAndInodeMeanTheJournal) {
  struct stat st {};
  ASSERT_EQ(fstat(STDERR_FILENO, &st), 0);
  const std::string value = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  setenv("JOURNAL_STREAM", value.c_str(), 1);
  EXPECT_EQ(detect_destination(), Destination::journal);
}

TEST_F(JournalStreamTest, AnotherStreamIsNotTheJournal) {
  // Standard error was redirected after systemd set the variable: the variable no longer applies.
  setenv("JOURNAL_STREAM", "1:1", 1);
  EXPECT_EQ(detect_destination(), Destination::terminal);
  setenv("JOURNAL_STREAM", "garbage", 1);
  EXPECT_EQ(detect_destination(), Destination::terminal);
  unsetenv("JOURNAL_STREAM");
  EXPECT_EQ(detect_destination(), Destination::terminal);
}

// Logs through the real logger set-up with standard error redirected to a file, as systemd does.
std::string log_through_stderr_file(bool announce_as_journal) {
  char path[] = "/tmp/fulfillsync-log-XXXXXX";
  const int file = mkstemp(path);
  const int saved_stderr = dup(STDERR_FILENO);
  dup2(file, STDERR_FILENO);
  if (announce_as_journal) {
    struct stat st {};
    fstat(file, &st);
    setenv("JOURNAL_STREAM", (std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino)).c_str(), 1);
  }
  init(detect_destination(), spdlog::level::info);
  spdlog::warn("disk almost full");
  spdlog::info("ready");
  spdlog::debug("not shown at info");
  spdlog::default_logger()->flush();
  dup2(saved_stderr, STDERR_FILENO);
  close(saved_stderr);
  close(file);
  std::FILE* in = std::fopen(path, "r");
  std::string text;
  for (int c; (c = std::fgetc(in)) != EOF;) text.push_back(static_cast<char>(c));
  std::fclose(in);
  unlink(path);
  return text;
}

TEST_F(JournalStreamTest, JournalLinesCarryPrioritiesAndNoTimestamps) {
  EXPECT_EQ(log_through_stderr_file(true), "<4>disk almost full\n<6>ready\n");
}

TEST_F(JournalStreamTest, TerminalLinesCarryTimestampsAndLevels) {
  const std::string text = log_through_stderr_file(false);
  EXPECT_THAT(text, ::testing::MatchesRegex(
                        "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+[-+][0-9]{2}:[0-9]{2} warning disk almost full\n"
                        "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+[-+][0-9]{2}:[0-9]{2} info    ready\n"));
}

TEST(LogLevelTest, NamesAndPriorities) {
  EXPECT_EQ(parse_level("warning"), spdlog::level::warn);
  EXPECT_EQ(parse_level("error"), spdlog::level::err);
  EXPECT_EQ(parse_level("verbose"), std::nullopt);
  EXPECT_EQ(syslog_priority(spdlog::level::err), 3);
  EXPECT_EQ(syslog_priority(spdlog::level::info), 6);
  EXPECT_EQ(syslog_priority(spdlog::level::debug), 7);
}

}  // namespace
}  // namespace fulfillsync::logging
