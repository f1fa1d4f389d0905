#include "cli/resync.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "store/return_progress.hpp"

namespace fulfillsync::daemon {
namespace {

std::string move_shipments_window(CheckpointStore& store, timestamps::TimePoint since) {
  const std::string target = timestamps::format_iso8601_z(since);
  const auto saved = store.cursor("pull_shipments");
  const auto at = saved ? timestamps::parse_iso8601(*saved) : std::nullopt;
  if (!at) return "pull_shipments: has not committed a window yet; it starts from the starting point";
  if (*at <= since) return fmt::format("pull_shipments: already at {}, not after {}; left as it is", *saved, target);
  store.save_cursor("pull_shipments", target);
  return fmt::format("pull_shipments: moved back from {} to {}; the next window reads every order changed since",
                     *saved, target);
}

std::string follow_returns_again(CheckpointStore& store, timestamps::TimePoint since) {
  return fmt::format("pull_returns: {} returns that changed since then are followed again",
                     ReturnProgress(store).forget_since(since));
}

}  // namespace

std::vector<std::string> resync(CheckpointStore& store, timestamps::TimePoint since,
                                std::optional<std::string_view> job) {
  if (job && std::find(std::begin(kResyncJobs), std::end(kResyncJobs), *job) == std::end(kResyncJobs)) {
    throw std::invalid_argument(
        fmt::format("no job '{}' to resync: pull_shipments or pull_returns (pull_lots and pull_stock read everything "
                    "every cycle)",
                    *job));
  }
  std::vector<std::string> done;
  if (!job || *job == "pull_shipments") done.push_back(move_shipments_window(store, since));
  if (!job || *job == "pull_returns") done.push_back(follow_returns_again(store, since));
  return done;
}

}  // namespace fulfillsync::daemon
