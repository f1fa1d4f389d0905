#pragma once
// What `fulfillsyncd status` and the end of `fulfillsyncd once` print: the outbound ledger by kind
// and state, the oldest waiting entry, where the source cursors stand, the latest rejections with
// their reasons, and the pull side.
#include <string>

#include "fulfillsync/daemon/checkpoint_store.hpp"
#include "fulfillsync/daemon/outbound_ledger.hpp"
#include "fulfillsync/merchant/merchant_database.hpp"

namespace fulfillsync::daemon {

// The table of entries by kind and state, and the latest rejections.
std::string format_summary(OutboundLedger& ledger, int rejections = 10);

// The summary with the starting point, the source cursors, the rows not read yet (when `merchant`
// is given) and the oldest waiting entry.
std::string format_status(CheckpointStore& store, OutboundLedger& ledger, merchant::MerchantDatabase* merchant);

// Where the shipments pull stands, the tracking marks by state (and why any keep failing), and each
// job's runs, failures, items, last success and lag as the daemon last saved them.
std::string format_pull_side(CheckpointStore& store);

}  // namespace fulfillsync::daemon
