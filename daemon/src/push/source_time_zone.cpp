#include "push/source_time_zone.hpp"

#include <chrono>

#include <spdlog/spdlog.h>

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/daemon/push/source_intake.hpp"

namespace fulfillsync::daemon {
namespace {

// Offsets run from UTC-12 to UTC+14, so a naive time moves by at most 26 hours; an hour more for
// the fraction the positions carry.
constexpr auto kLargestMove = std::chrono::hours(27);

// Moves the updated_at read position `name` back by kLargestMove; false when there is none.
bool rewind(CheckpointStore& store, const std::string& name) {
  const auto saved = store.cursor(name);
  const auto cursor = saved ? decode_cursor(*saved) : std::nullopt;
  if (!cursor) return false;
  const auto at = timestamps::parse_iso8601(cursor->updated_at);
  // A position that is no instant (a row whose updated_at is not a time) goes back to the start.
  const merchant::ChangeCursor earlier{at ? timestamps::format_iso8601_z(*at - kLargestMove) : std::string(), ""};
  store.save_cursor(name, encode_cursor(earlier));
  return true;
}

}  // namespace

std::optional<std::string> saved_source_time_zone(CheckpointStore& store) {
  if (auto zone = store.cursor(kSourceTimeZoneName)) return zone;
  if (store.cursor(SourceIntake<merchant::OrderRow>::cursor_name())) return "UTC";
  return std::nullopt;
}

bool adopt_source_time_zone(CheckpointStore& store, std::string_view zone) {
  const auto saved = saved_source_time_zone(store);
  const bool changed = saved && *saved != zone;
  if (changed) {
    bool moved = false;
    for (const std::string& name :
         {SourceIntake<merchant::OrderRow>::cursor_name(), SourceIntake<merchant::ReturnRow>::cursor_name()}) {
      moved = rewind(store, name) || moved;
    }
    spdlog::warn("merchant.timezone is {}, but the read positions were saved under {}: every updated_at without Z "
                 "or an offset now names another instant{}",
                 zone, *saved,
                 moved ? "; reading by updated_at goes back 27 hours so that no row is skipped (versions already "
                         "sent are recognised by their content and not sent again)"
                       : "");
  }
  if (!saved || changed) store.save_cursor(kSourceTimeZoneName, zone);
  return changed;
}

}  // namespace fulfillsync::daemon
