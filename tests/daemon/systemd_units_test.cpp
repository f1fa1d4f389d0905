// The unit files pass systemd's own checks: `systemd-analyze verify` and an offline security review
// (`systemd-analyze security --offline`, systemd 250 and later).
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::testing {
namespace {

struct Unit {
  const char* file;      // under systemd/
  const char* instance;  // the unit name to check
};

void PrintTo(const Unit& unit, std::ostream* out) { *out << unit.instance; }

class SystemdUnitTest : public ::testing::TestWithParam<Unit> {
 protected:
  // A copy whose ExecStart points at the binary just built: verify checks that it is executable.
  std::filesystem::path installed_copy() {
    std::string unit = read_file(source_path(std::string("systemd/") + GetParam().file));
    const std::string installed = "/usr/bin/fulfillsyncd";
    for (std::size_t at; (at = unit.find(installed)) != std::string::npos;) {
      unit.replace(at, installed.size(), binary_path("fulfillsyncd").string());
    }
    write_file(dir / GetParam().file, unit);
    return dir / GetParam().instance;
  }

  TempDir dir;
};

TEST_P(SystemdUnitTest, VerifyAcceptsIt) {
  const auto unit = installed_copy();
  const RunResult result = run({"/usr/bin/systemd-analyze", "verify", unit.string()});
  EXPECT_EQ(result.exit_status, 0) << result.stdout_text << result.stderr_text;
  EXPECT_EQ(result.stderr_text, "");
}

// The offline security review: its overall figure, and the items it still counts against the unit.
struct SecurityReview {
  double exposure = 0;
  std::set<std::string> open_items;  // the names of the items with a figure, as "PrivateNetwork="
};

SecurityReview review(const std::filesystem::path& unit) {
  const RunResult result =
      run({"/usr/bin/systemd-analyze", "security", "--offline=true", "--no-pager", unit.string()});
  SecurityReview out;
  std::smatch match;
  if (!std::regex_search(result.stdout_text, match, std::regex(R"(Overall exposure level for \S+: ([0-9.]+))"))) {
    ADD_FAILURE() << result.stdout_text << result.stderr_text;
    return out;
  }
  out.exposure = std::stod(match[1].str());
  // "✗ NAME  DESCRIPTION  EXPOSURE" ("-" in a non-UTF-8 locale); passed items have no figure.
  const std::regex open_item(R"(^\S+ (\S+) .* [0-9]+\.[0-9]\s*$)");
  std::istringstream lines(result.stdout_text);
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_search(line, match, open_item)) out.open_items.insert(match[1].str());
  }
  return out;
}

TEST_P(SystemdUnitTest, ExposureIsAtMostOnePointOne) {
  const SecurityReview result = review(installed_copy());
  EXPECT_LE(result.exposure, 1.1);
}

// Every item the review still counts is one the daemon needs, and the unit says why in a comment.
TEST_P(SystemdUnitTest, EveryRemainingExposureIsExplainedInTheUnit) {
  const std::map<std::string, std::string> explained = {
      {"PrivateNetwork=", "PrivateNetwork="},
      {"RestrictAddressFamilies=~AF_(INET|INET6)", "AF_INET AF_INET6"},
      {"RestrictAddressFamilies=~AF_UNIX", "AF_UNIX"},
      {"IPAddressDeny=", "IPAddressDeny="},
      {"DeviceAllow=", "DeviceAllow="},
      {"RootDirectory=/RootImage=", "RootDirectory=/RootImage="},
  };
  std::string comments;
  std::istringstream lines(read_file(source_path(std::string("systemd/") + GetParam().file)));
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("#")) comments += line + "\n";
  }
  const std::set<std::string> open_items = review(installed_copy()).open_items;
  EXPECT_TRUE(open_items.contains("PrivateNetwork=")) << "the review's lines were not read";
  for (const std::string& item : open_items) {
    const auto it = explained.find(item);
    ASSERT_NE(it, explained.end()) << item << " is counted against the unit and not one the daemon needs";
    EXPECT_NE(comments.find(it->second), std::string::npos) << "the unit does not say why it keeps " << item;
  }
}

TEST_P(SystemdUnitTest, HasTheFreeHardeningAndNoEmptyIpFilter) {
  const std::string unit = read_file(source_path(std::string("systemd/") + GetParam().file));
  EXPECT_THAT(unit, ::testing::HasSubstr("\nPrivateMounts=yes\n"));
  // An empty IPAddressDeny= only resets the list: it filters nothing.
  EXPECT_FALSE(std::regex_search(unit, std::regex(R"(\nIPAddress(Deny|Allow)=[ \t]*\n)")));
}

INSTANTIATE_TEST_SUITE_P(Units, SystemdUnitTest,
                         ::testing::Values(Unit{"fulfillsyncd.service", "fulfillsyncd.service"},
                                           Unit{"fulfillsyncd@.service", "fulfillsyncd@shop1.service"}),
                         [](const auto& param_info) { return param_info.index == 0 ? std::string("Plain") : std::string("Template"); });

}  // namespace
}  // namespace fulfillsync::testing
