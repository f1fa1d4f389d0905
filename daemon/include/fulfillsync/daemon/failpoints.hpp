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

inline constexpr std::array<std::string_view, 15> kFailpoints = {
    "intake.before_commit",                // source rows read and offered, before the ledger commit
    "push_orders.before_send",             // entries durably in_flight, nothing sent yet
    "push_orders.after_response",          // answers received, before the ledger records them
    "push_orders.after_ledger_commit",     // ledger committed, before the merchant's result write
    "push_orders.after_result_write",      // result rows written, before the ledger knows
    "push_orders.after_reconcile_lookup",  // the provider looked up, before the ledger adopts
    "push_cancels.before_send",
    "push_cancels.after_response",
    "push_cancels.after_ledger_commit",
    "push_cancels.after_result_write",
    "push_returns.before_send",
    "push_returns.after_response",
    "push_returns.after_ledger_commit",
    "push_returns.after_result_write",
    "push_returns.after_reconcile_lookup",
};

// Reads FULFILLSYNC_FAILPOINTS once. Throws std::invalid_argument for a name or count it does not know.
void arm_failpoints_from_environment();

// Kills the process when `name` is armed and its count is reached; otherwise nothing.
void failpoint(std::string_view name);

}  // namespace fulfillsync::daemon
