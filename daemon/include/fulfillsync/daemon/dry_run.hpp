#pragma once
// `fulfillsyncd --dry-run run|once`: reads the source rows a start would push (after the saved
// cursors, or from sync.orders_since before the first start), builds and validates every request,
// logs each one with personal data redacted, and prints what would be created, cancelled and
// rejected. Sends nothing; writes nothing.
#include "fulfillsync/config/config.hpp"

namespace fulfillsync::daemon {

// Returns the exit code: 0, or 65 when some rows would be rejected.
int dry_run(const config::Config& config);

}  // namespace fulfillsync::daemon
