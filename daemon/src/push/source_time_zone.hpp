#pragma once
// merchant.timezone is part of every read position by updated_at: a value without Z or an offset is
// a wall time in that zone. The store keeps the zone its positions were saved under, so that a
// change is noticed at start instead of silently moving every naive time.
#include <string_view>

#include "fulfillsync/daemon/store/checkpoint_store.hpp"

namespace fulfillsync::daemon {

// The cursors entry holding the zone.
inline constexpr std::string_view kSourceTimeZoneName = "merchant_timezone";

// The zone the saved read positions were taken in: as recorded, or UTC for a store written before
// the zone was recorded (those versions read naive times as UTC); nothing before the first start.
std::optional<std::string> saved_source_time_zone(CheckpointStore& store);

// At start, before the intakes read their cursors. When `zone` differs from the saved one, naive
// updated_at values have moved by the difference of the two zones' offsets (at most 26 hours): the
// read positions by updated_at go back by more than that, with a warning, so that no row moved
// behind them is skipped (rows read again are recognised by their content, not sent twice). Then
// `zone` is saved. Returns whether the zone changed.
bool adopt_source_time_zone(CheckpointStore& store, std::string_view zone);

}  // namespace fulfillsync::daemon
