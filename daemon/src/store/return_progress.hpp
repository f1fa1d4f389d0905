#pragma once
// The last status pull_returns saw of each return the daemon created (the checkpoint store's
// `return_progress`): which returns are still followed, and what `resync` forgets.
#include <cstdint>
#include <span>
#include <vector>

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/daemon/store/checkpoint_store.hpp"
#include "fulfillsync/merchant/pulled_records.hpp"

namespace fulfillsync::daemon {

class ReturnProgress {
 public:
  explicit ReturnProgress(CheckpointStore& store) : store_(store) {}

  // The provider's ids of the returns the daemon created whose last known status is not final.
  std::vector<std::int64_t> open_returns();
  // Saves the statuses, in one transaction, once the merchant database holds them; an older
  // status than the one saved changes nothing.
  void save(std::span<const merchant::ReturnStatusRecord> records);
  // Forgets the statuses seen at or after `since`, so those returns are followed again; returns how many.
  int forget_since(timestamps::TimePoint since);

 private:
  CheckpointStore& store_;
};

}  // namespace fulfillsync::daemon
