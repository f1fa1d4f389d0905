// The unit files pass systemd's own checks: `systemd-analyze verify` and an offline security review.
#include <regex>

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

TEST_P(SystemdUnitTest, ExposureIsAtMostTwo) {
  const auto unit = installed_copy();
  const RunResult result =
      run({"/usr/bin/systemd-analyze", "security", "--offline=true", "--no-pager", unit.string()});
  std::smatch match;
  ASSERT_TRUE(std::regex_search(result.stdout_text, match, std::regex(R"(Overall exposure level for \S+: ([0-9.]+))")))
      << result.stdout_text << result.stderr_text;
  EXPECT_LE(std::stod(match[1].str()), 2.0) << result.stdout_text;
}

INSTANTIATE_TEST_SUITE_P(Units, SystemdUnitTest,
                         ::testing::Values(Unit{"fulfillsyncd.service", "fulfillsyncd.service"},
                                           Unit{"fulfillsyncd@.service", "fulfillsyncd@shop1.service"}),
                         [](const auto& param_info) { return param_info.index == 0 ? std::string("Plain") : std::string("Template"); });

}  // namespace
}  // namespace fulfillsync::testing
