#pragma once
// `fulfillsyncd --dry-run run|once`: reads the source rows a start would push (after the saved
// cursors, or from sync.orders_since before the first start), builds and validates every request,
// logs each one with personal data redacted, and prints what would be created, cancelled and
// rejected; with push_products on, what it would send for each product of the catalog (created
// with its variants, updated with only what changed, rejected with the reasons), compared with the
// ledger as push_products compares it. Sends nothing and writes nothing: the merchant database and
// the checkpoint store are opened read-only (a missing store is not created) and stay byte for
// byte as they were.
#include "fulfillsync/config/config.hpp"

namespace fulfillsync::daemon {

// Returns the exit code: 0; 65 when some rows or products would be rejected (or stay rejected); 69
// when the merchant database or the checkpoint store cannot be read (a missing merchant database
// among them); 75 when stopped by SIGTERM or SIGINT before the end.
int dry_run(const config::Config& config);

}  // namespace fulfillsync::daemon
