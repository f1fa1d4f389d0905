#include "fulfillsync/daemon/job/failpoints.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>

#include <spdlog/spdlog.h>

namespace fulfillsync::daemon {
namespace {

// Passes left before each armed failpoint fires.
std::map<std::string, long, std::less<>>& armed() {
  static std::map<std::string, long, std::less<>> points;
  return points;
}

}  // namespace

void arm_failpoints_from_environment() {
  const char* value = std::getenv("FULFILLSYNC_FAILPOINTS");
  if (value == nullptr || *value == '\0') return;
  std::string_view rest(value);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    long count = 1;
    if (const std::size_t at = item.find('@'); at != std::string_view::npos) {
      const std::string_view number = item.substr(at + 1);
      const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), count);
      if (error != std::errc() || end != number.data() + number.size() || count < 1) {
        throw std::invalid_argument("FULFILLSYNC_FAILPOINTS: '" + std::string(item) + "' needs a count of 1 or more");
      }
      item = item.substr(0, at);
    }
    if (std::find(kFailpoints.begin(), kFailpoints.end(), item) == kFailpoints.end() &&
        std::find(kFaults.begin(), kFaults.end(), item) == kFaults.end()) {
      throw std::invalid_argument("FULFILLSYNC_FAILPOINTS: no failpoint is called '" + std::string(item) + "'");
    }
    armed()[std::string(item)] = count;
    spdlog::warn("failpoint {} armed: the process will be killed at pass {}", item, count);
  }
}

void failpoint(std::string_view name) {
  auto& points = armed();
  if (points.empty()) return;
  const auto it = points.find(name);
  if (it == points.end() || --it->second > 0) return;
  spdlog::critical("failpoint {}: killing the process", name);
  spdlog::default_logger()->flush();
  ::kill(::getpid(), SIGKILL);
  ::_exit(137);  // not reached
}

bool fault(std::string_view name) {
  auto& points = armed();
  if (points.empty()) return false;
  const auto it = points.find(name);
  if (it == points.end() || --it->second > 0) return false;
  points.erase(it);
  spdlog::warn("fault {}: injected", name);
  return true;
}

}  // namespace fulfillsync::daemon
