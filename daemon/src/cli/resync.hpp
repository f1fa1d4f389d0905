#pragma once
// `fulfillsyncd resync --since DATE [--job NAME]`: moves a pull job's position back, so that what the
// provider changed since DATE is read again (after restoring the merchant database from a backup,
// say). Safe with the daemon running: moving back only repeats work (every write is an upsert), and
// the daemon saves a window's end only if the position is still the one the window began from.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/daemon/store/checkpoint_store.hpp"

namespace fulfillsync::daemon {

// The jobs with a position to move: pull_shipments (its window) and pull_returns (the returns it
// stopped following). pull_lots and pull_stock read everything every cycle.
inline constexpr std::string_view kResyncJobs[] = {"pull_shipments", "pull_returns"};

// Moves `job` (or every job above) back to `since`; one line per job saying what it did. Never moves
// a position forward. Throws std::invalid_argument for a job it does not know.
std::vector<std::string> resync(CheckpointStore& store, timestamps::TimePoint since,
                                std::optional<std::string_view> job);

}  // namespace fulfillsync::daemon
