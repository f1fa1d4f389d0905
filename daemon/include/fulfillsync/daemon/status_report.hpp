#pragma once
// What `fulfillsyncd status` and the end of `fulfillsyncd once` print: the outbound ledger by kind
// and state, the oldest waiting entry, where the source cursors stand, and the latest rejections
// with their reasons.
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

}  // namespace fulfillsync::daemon
