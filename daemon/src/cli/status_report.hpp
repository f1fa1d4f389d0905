#pragma once
// What `fulfillsyncd status` and the end of `fulfillsyncd once` print: whether a daemon runs on the
// checkpoint store and what it waits for, the outbound ledger by kind and state, the oldest waiting
// entry, the source rows whose version the ledger does not hold yet, where the source cursors stand,
// the latest rejections with their reasons, and the pull side and each job's state, last answer from
// the provider and last error.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/daemon/store/checkpoint_store.hpp"
#include "fulfillsync/daemon/store/daemon_record.hpp"
#include "fulfillsync/daemon/store/job_stats.hpp"
#include "fulfillsync/daemon/store/outbound_ledger.hpp"
#include "fulfillsync/merchant/source_tables.hpp"
#include "fulfillsync/merchant/sync_results.hpp"
#include "push/catalog_standing.hpp"

namespace fulfillsync::daemon {

// A merchant's reference id (up to 300 characters) as a summary line shows it: escaped where it is
// not printable, and cut to what finds it.
std::string shortened_reference(std::string_view reference);

// A job's state as status names it, from its saved figures: "paused" (until an operator acts),
// "failing" (its last `failing_after` runs failed: api.retry.attempts, as `once` counts), "retrying"
// (its last run failed), "ok", or "not_run" (no run yet).
std::string_view job_state(const JobStats& job, int failing_after);

// How the daemon on a store is, and `status`'s exit status for it.
enum class Health {
  healthy,      // a daemon runs, and no job is failing or paused
  failing,      // a daemon runs, but a job is failing or paused, or the jobs wait for the provider
  not_running,  // no daemon runs on the store
};

struct DaemonStatus {
  std::optional<DaemonRecord> daemon;  // the daemon that last started on the store
  bool running = false;
  std::vector<JobStats> jobs;
  int failing_after = 3;
  Health health = Health::not_running;
};
DaemonStatus read_daemon_status(CheckpointStore& store, int failing_after);

// The table of entries by kind and state, and the latest rejections (of `kinds`: status lists the
// catalog's apart, with their SKUs).
std::string format_summary(OutboundLedger& ledger, int rejections = 10,
                           OutboundLedger::Kinds kinds = OutboundLedger::Kinds::all);

// Source rows (orders and returns) with a version the outbound ledger does not hold yet: open rows
// changed since the starting point, compared with the ledger as the reconciliation sweep compares
// them (push/open_rows.hpp). nullopt without the merchant's source tables or a starting point (never
// started), or when they cannot be read.
std::optional<std::int64_t> source_rows_waiting(CheckpointStore& store, OutboundLedger& ledger,
                                                merchant::SourceTables* merchant);

// What status shows of the catalog: its backlog (push/catalog_standing.hpp) while push_products is
// on, or while it is off but the ledger holds products; nothing otherwise.
struct CatalogStatus {
  bool push_products = false;  // sync.jobs.push_products.enabled
  CatalogBacklog backlog;
};
inline constexpr std::size_t kCatalogRejectionsListed = 20;
// Nothing when push_products is off and the ledger holds no product. With push_products on, the
// catalog (`source`, when given) is read whole and compared with the ledger.
std::optional<CatalogStatus> read_catalog_status(OutboundLedger& ledger, merchant::SourceTables* source,
                                                 bool push_products);

// The daemon's lines (running or not, PID, uptime, what it waits for, whether anything ever
// succeeded), then the summary with the starting point, the source cursors, the rows not read yet
// (when the merchant's source tables are given), the oldest waiting entry, the orders whose cancel
// the provider does not show (when its result tables are given), the catalog's backlog and
// rejections (when `catalog` is given: the latest rejections then leave the catalog's to it), and
// the pull side. It never says "Nothing waiting to be sent" while source_rows_waiting() counts a
// row or the catalog has a product to create or a change to send.
std::string format_status(CheckpointStore& store, OutboundLedger& ledger, merchant::SourceTables* merchant,
                          merchant::SyncResults* results, const DaemonStatus& daemon,
                          const std::optional<CatalogStatus>& catalog = std::nullopt);

// The same for scripts, as one JSON object (README, "status"). Without a ledger (no store yet), the
// outbound counts are 0 and there are no rejections: the shape is the same.
// `cancel_mismatches` lists the orders whose cancel the provider does not show (null without `results`);
// `source_rows_waiting` is source_rows_waiting()'s count (null when it cannot tell); `catalog` is
// null without a CatalogStatus.
std::string format_status_json(const std::filesystem::path& store, OutboundLedger* ledger, const DaemonStatus& daemon,
                               merchant::SyncResults* results = nullptr,
                               std::optional<std::int64_t> source_rows_waiting = std::nullopt,
                               const std::optional<CatalogStatus>& catalog = std::nullopt);

// Where the shipments pull stands, the tracking marks by state (and why any keep failing), and each
// job's runs, failures, items, last success and lag, state, last answer and last error as the daemon
// last saved them.
std::string format_pull_side(CheckpointStore& store, int failing_after);

}  // namespace fulfillsync::daemon
