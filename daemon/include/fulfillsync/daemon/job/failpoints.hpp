#pragma once
// Failpoints: named places between the durable steps of a sync job where a test can kill the daemon
// (SIGKILL, as a crash or a power cut would) to prove that a restart loses and duplicates nothing.
//
// Inert unless FULFILLSYNC_FAILPOINTS names them: a comma-separated list of `name` (die at the first
// pass) or `name@N` (die at the Nth pass), e.g. `push_orders.before_send@3`. The names in use are
// listed by kFailpoints; a name not in it is refused at start, so a typo cannot make a test vacuous.
#include <array>
#include <string_view>

namespace fulfillsync::daemon {

inline constexpr std::array<std::string_view, 38> kFailpoints = {
    "intake.before_commit",                // source rows read and offered, before the ledger commit
    "push_orders.before_send",             // a chunk taken, nothing in flight yet
    "push_orders.after_mark",              // sends durably in_flight, about to leave
    "push_orders.after_response",          // answers received, before the ledger records them
    "push_orders.after_ledger_commit",     // ledger committed, before the merchant's result write
    "push_orders.after_result_write",      // result rows written, before the ledger knows
    "push_orders.after_reconcile_lookup",  // the provider looked up, before the ledger adopts
    "push_cancels.before_send",
    "push_cancels.after_mark",
    "push_cancels.after_response",
    "push_cancels.after_ledger_commit",
    "push_cancels.after_result_write",
    "push_cancels.after_reconcile_lookup",  // the orders read, before the ledger settles the cancels
    "push_returns.before_send",
    "push_returns.after_mark",
    "push_returns.after_response",
    "push_returns.after_ledger_commit",
    "push_returns.after_result_write",
    "push_returns.after_reconcile_lookup",
    "push_products.before_send",             // creates taken, nothing in flight yet
    "push_products.after_mark",              // creates or updates durably in_flight, about to leave
    "push_products.after_response",          // answers received, before the ledger records them
    "push_products.after_ledger_commit",     // ledger committed, before the merchant's result write
    "push_products.after_result_write",      // product_sync written, before the ledger knows
    "push_products.after_reconcile_lookup",  // an unclear create looked up by SKU, before the ledger adopts
    "push_products.before_update",           // updates taken, nothing in flight yet
    "push_products.between_requests",        // an update's first request answered, the next not sent
    "pull_shipments.after_page_commit",     // a page of the window in the merchant database, more to come
    "pull_shipments.before_checkpoint",     // the whole window committed, its end not saved yet
    "mark_tracking.after_reconcile_lookup",  // unclear marks looked up, before the ledger adopts them
    "mark_tracking.before_send",            // marks durably in_flight, nothing sent yet
    "mark_tracking.after_response",         // the batch answered, before the ledger records it
    "mark_tracking.after_ledger_commit",    // ledger committed, before the merchant's tracking rows
    "mark_tracking.after_result_write",     // tracking rows written, before the ledger knows
    "pull_returns.after_merchant_commit",   // returns written, their progress not saved yet
    "pull_lots.after_merchant_commit",
    "pull_stock.after_page_commit",         // a page of the product list written, its next link not saved
    "pull_stock.before_checkpoint",         // the whole list written and the SKUs it lacks removed, pass not saved
};

// Faults: named places where an armed test makes the daemon misbehave as a bug would, instead of
// killing it (fault() is true at the armed pass, once). Armed the same way, by the same variable.
inline constexpr std::array<std::string_view, 1> kFaults = {
    "intake.drop_one_change",  // a changed row read from the change log is dropped (the sweep must find it)
};

// Reads FULFILLSYNC_FAILPOINTS once. Throws std::invalid_argument for a name or count it does not know.
void arm_failpoints_from_environment();

// Kills the process when `name` is armed and its count is reached; otherwise nothing.
void failpoint(std::string_view name);

// True when the fault `name` (kFaults) is armed and its count is reached; it then disarms.
bool fault(std::string_view name);

}  // namespace fulfillsync::daemon
