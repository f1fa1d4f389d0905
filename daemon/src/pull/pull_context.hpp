#pragma once
// What the jobs that bring the provider's side back into the merchant's database share. They all
// call at Priority::pull (marks at Priority::mark) and read the provider's data from the starting
// point on, like the pushes.
#include <chrono>

#include "fulfillsync/api/client.hpp"
#include "fulfillsync/api/models/api_version.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/daemon/job/sync_metrics.hpp"
#include "fulfillsync/daemon/store/checkpoint_store.hpp"
#include "fulfillsync/merchant/pulled_tables.hpp"

namespace fulfillsync::daemon {

struct PullContext {
  api::ApiClient& client;
  merchant::PulledTables& merchant;
  CheckpointStore& checkpoint;
  SyncMetrics& metrics;
  api::ApiVersion version;
  const bool& stopping;
  timestamps::TimePoint starting_point;  // nothing older is read
  // An unclear send is looked up only this long after it (the request timeout): see OutboundLedger::unclear.
  std::chrono::milliseconds unclear_lookup_delay;
};

}  // namespace fulfillsync::daemon
