#pragma once
#include <optional>
#include <string_view>

#include <spdlog/spdlog.h>

namespace fulfillsync::logging {

// Where standard error goes: the systemd journal wants `<N>` priority prefixes and no timestamps
// (it stamps lines itself); a terminal or a file wants readable timestamped lines.
enum class Destination { terminal, journal };

// The journal when $JOURNAL_STREAM names the device and inode of our standard error.
Destination detect_destination();

// Installs the process-wide default logger writing to standard error.
void init(Destination destination, spdlog::level::level_enum level);

// trace, debug, info, warn (or warning), error, critical, off.
std::optional<spdlog::level::level_enum> parse_level(std::string_view name);

// The syslog priority of a level, as the journal reads it from a `<N>` prefix.
int syslog_priority(spdlog::level::level_enum level);

}  // namespace fulfillsync::logging
