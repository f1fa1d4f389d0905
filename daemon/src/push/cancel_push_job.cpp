#include "push/cancel_push_job.hpp"

#include <algorithm>
#include <cassert>
#include <exception>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/common/invariant.hpp"
#include "fulfillsync/common/printable.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/config/duration.hpp"
#include "fulfillsync/daemon/job/failpoints.hpp"
#include "job/chunked_lookup.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;
using namespace std::chrono_literals;
using api::OutcomeKind;


namespace {

// Order ids per read before cancels leave: the provider's page limit.
constexpr std::size_t kIdsPerRead = 250;

// The status of each order found, by its id.
std::map<std::int64_t, std::string> statuses_of(const api::OrderPage& page) {
  std::map<std::int64_t, std::string> status_of;
  for (const api::Order& order : page) status_of.insert_or_assign(order.id, order.status);
  return status_of;
}

// How often the result table is checked for cancels the provider does not show; the statuses it
// holds change only with the shipments pull.
constexpr auto kIntentCheckInterval = std::chrono::minutes(2);
// Rows read per check: more would be a flood to settle by hand, and the gauge says "at least".
constexpr std::size_t kIntentCheckLimit = 1000;

}  // namespace

bool provider_can_cancel(std::string_view status) {
  // The spec's order statuses; PartiallyFulfilled, Fulfilled have shipments out, Cancelled is done.
  return status == "Processing" || status == "Exception" || status == "ImportReview";
}

CancelMismatch classify_cancel_mismatch(const merchant::SyncResult& row) {
  // A refused cancel is not sent again by itself: an operator sends it again (`fulfillsyncd retry`) if it should be.
  const bool applied = row.state == "cancelled";
  return applied && row.remote_status && provider_can_cancel(*row.remote_status) ? CancelMismatch::send_again
                                                                                 : CancelMismatch::surfaced;
}

void CancelPushJob::check_intent() {
  const auto now = std::chrono::steady_clock::now();
  if (intent_checked_at_ && now - *intent_checked_at_ < kIntentCheckInterval) return;
  // Tried again after the interval, not at the next run (a few a second): the cancels are sent
  // meanwhile, and the log holds one line a try.
  intent_checked_at_ = now;
  std::vector<merchant::SyncResult> rows;
  try {
    rows = sync_results_.cancel_mismatches(kIntentCheckLimit);
  } catch (const merchant::MerchantDatabaseError& e) {
    spdlog::warn("{}: cannot check the cancels against the provider's statuses ({}); trying again in {} minutes",
                 name(), e.what(), std::chrono::duration_cast<std::chrono::minutes>(kIntentCheckInterval).count());
    return;
  }
  std::set<std::string, std::less<>> surfaced;
  auto& ledger = context_.ledger;
  auto batch = ledger.batch();
  for (const auto& row : rows) {
    const std::string status = row.remote_status.value_or("");
    if (classify_cancel_mismatch(row) == CancelMismatch::send_again &&
        ledger.reopen_cancel(row.reference_id, fmt::format("the provider shows the order {} after its cancel",
                                                           status))) {
      context_.metrics.count_items(name(), "reopened");
      spdlog::warn("order {}: cancelled, yet the provider shows it {}; sending the cancel again",
                   text::printable(row.reference_id), text::printable(status));
      continue;
    }
    if (!surfaced_.contains(row.reference_id)) {
      spdlog::warn("order {}: cancelled at the merchant, but the provider shows it {} ({}); it cannot be cancelled "
                   "any more and is left to an operator (status lists it)",
                   text::printable(row.reference_id), text::printable(status), row.state);
    }
    surfaced.insert(row.reference_id);
  }
  batch.commit();
  context_.metrics.set_cancel_mismatches(static_cast<int>(surfaced.size()));
  surfaced_ = std::move(surfaced);
}

int CancelPushJob::backlog() {
  return still_idle(LedgerKind::order_cancel) ? 0 : context_.ledger.waiting(LedgerKind::order_cancel);
}

asio::awaitable<JobRun> CancelPushJob::run() {
  JobRun run;
  if (backoff_.holds(run)) co_return run;
  run.more = poll_source();
  check_intent();
  // No cancel waits, none changed: nothing to look up, send or write (the creates' results are
  // push_orders' to write).
  if (still_idle(LedgerKind::order_cancel)) co_return run;
  co_await reconcile(run);
  if (run.back_off > 0ms) {
    co_await context_.results.flush_async(merchant::SourceKind::orders, name());
    co_return run;
  }
  auto& ledger = context_.ledger;
  std::vector<std::string> keys;
  std::vector<std::int64_t> order_ids;
  {
    auto batch = ledger.batch();
    const auto pending = ledger.in_state(LedgerKind::order_cancel, LedgerState::pending, config_.batch_size);
    for (const auto& cancel : pending) {
      if (static_cast<int>(keys.size()) >= chunk_size() || context_.stopping) {
        run.more = true;
        break;
      }
      const auto create = ledger.find(LedgerKind::order_create, cancel.source_key);
      if (!create) continue;  // not possible: a cancel is queued only for a sent create
      if (create->state == LedgerState::created && create->remote_id) {
        keys.push_back(cancel.source_key);
        order_ids.push_back(*create->remote_id);
      } else if (create->state == LedgerState::rejected || create->state == LedgerState::withdrawn) {
        // Never created: nothing to cancel.
        constexpr const char* kWhy = "cancelled at the merchant; the order was never created";
        ledger.withdraw(LedgerKind::order_cancel, cancel.source_key, cancel.content_hash, kWhy);
        if (create->state == LedgerState::rejected) {
          ledger.withdraw(LedgerKind::order_create, cancel.source_key, create->content_hash, kWhy);
        }
        context_.metrics.count_items(name(), "withdrawn");
        ++run.settled;
      }
      // Otherwise the create is still being settled: the cancel waits for it.
    }
    batch.commit();
  }
  if (!keys.empty() && !co_await skip_already_cancelled(keys, order_ids, run)) {
    co_await context_.results.flush_async(merchant::SourceKind::orders, name());
    co_return run;
  }
  if (!keys.empty()) {
    failpoint("push_cancels.before_send");
    // Never resent by the client: a lost answer is settled by reading the order.
    const SendOne send_cancel = [&](std::size_t i, api::BeforeSend before_send) {
      return provider_.cancel_order(order_ids[i], std::move(before_send));
    };
    co_await send_marked(
        LedgerKind::order_cancel, keys, send_cancel, run,
        [&](std::size_t i, const api::Outcome& outcome) { record(keys[i], order_ids[i], outcome, run); });
  }
  const OutboundLedger::Version version = ledger.version({LedgerKind::order_cancel});
  const bool written = co_await context_.results.flush_async(merchant::SourceKind::orders, name());
  note_if_idle(LedgerKind::order_cancel, version, written, run);
  co_return run;
}

asio::awaitable<bool> CancelPushJob::skip_already_cancelled(std::vector<std::string>& keys,
                                                            std::vector<std::int64_t>& order_ids, JobRun& run) {
  std::map<std::int64_t, std::string> status_of;
  const ChunkedLookup<std::int64_t, api::OrderPage> lookup{
      .job = name(),
      .what = "the orders to cancel",
      .chunk = kIdsPerRead,
      .ask = [&](std::span<const std::int64_t> chunk) { return provider_.find_orders_by_id(chunk, api::Priority::push); },
      .settle = [&](std::size_t, std::span<const std::int64_t>, const api::OrderPage& found) {
        for (const api::Order& order : found) status_of.insert_or_assign(order.id, order.status);
        return true;
      }};
  if (!co_await look_up_in_chunks(order_ids, lookup, context_.stopping, backoff_, run)) co_return false;
  auto& ledger = context_.ledger;
  auto batch = ledger.batch();
  std::vector<std::string> due_keys;
  std::vector<std::int64_t> due_ids;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto status = status_of.find(order_ids[i]);
    if (status == status_of.end() || status->second != "Cancelled") {
      due_keys.push_back(keys[i]);
      due_ids.push_back(order_ids[i]);
      continue;
    }
    const auto cancel = ledger.find(LedgerKind::order_cancel, keys[i]);
    ledger.adopt(LedgerKind::order_cancel, keys[i], cancel ? cancel->content_hash : "", order_ids[i], "Cancelled", "",
                 "");
    context_.metrics.count_items(name(), "adopted");
    spdlog::info("order {}: already cancelled at the provider; the cancel is not sent again", text::printable(keys[i]));
    ++run.settled;
  }
  batch.commit();
  keys = std::move(due_keys);
  order_ids = std::move(due_ids);
  co_return true;
}

asio::awaitable<void> CancelPushJob::reconcile(JobRun& run) {
  auto& ledger = context_.ledger;
  const auto unknown = ledger.unclear(LedgerKind::order_cancel, context_.unclear_lookup_delay, config_.batch_size);
  if (unknown.size() == static_cast<std::size_t>(config_.batch_size)) run.more = true;
  std::vector<std::int64_t> order_ids;
  for (const LedgerEntry& cancel : unknown) {
    const auto create = ledger.find(LedgerKind::order_create, cancel.source_key);
    // A cancel is sent only for a created order, so its create has the id; a store that says
    // otherwise has lost track of what was sent, and reading the missing id would be undefined.
    FULFILLSYNC_INVARIANT(create && create->remote_id, "an unclear cancel belongs to a created order");
    order_ids.push_back(*create->remote_id);
  }
  const ChunkedLookup<std::int64_t, api::OrderPage> lookup{
      .job = name(),
      .what = "unclear sends",
      .ask = [&](std::span<const std::int64_t> chunk) { return provider_.find_orders_by_id(chunk, api::Priority::push); },
      .settle = [&](std::size_t first, std::span<const std::int64_t> chunk, const api::OrderPage& found) {
        settle_unclear(std::span(unknown).subspan(first, chunk.size()), chunk, statuses_of(found), run);
        return true;
      }};
  co_await look_up_in_chunks(order_ids, lookup, context_.stopping, backoff_, run);
}

void CancelPushJob::settle_unclear(std::span<const LedgerEntry> unclear, std::span<const std::int64_t> order_ids,
                                   const std::map<std::int64_t, std::string>& status_of, JobRun& run) {
  auto& ledger = context_.ledger;
  failpoint("push_cancels.after_reconcile_lookup");
  auto batch = ledger.batch();
  for (std::size_t i = 0; i < unclear.size(); ++i) {
    const std::string& key = unclear[i].source_key;
    const std::int64_t order_id = order_ids[i];
    const auto status = status_of.find(order_id);
    if (status != status_of.end() && status->second == "Cancelled") {
      ledger.mark_applied(key, order_id, "Cancelled");
      context_.metrics.count_items(name(), "adopted");
      spdlog::info("order {}: the provider has it cancelled; the unclear cancel is done", text::printable(key));
      ++run.settled;
    } else {
      const std::string now = status == status_of.end() ? "not found" : status->second;
      ledger.mark_pending(LedgerKind::order_cancel, key, fmt::format("not cancelled at the provider ({}) after an "
                                                                     "unclear cancel",
                                                                     now));
      context_.metrics.count_items(name(), "retried");
      spdlog::info("order {}: {} at the provider after an unclear cancel; sending it again", text::printable(key),
                   now);
    }
  }
  batch.commit();
}

void CancelPushJob::record(const std::string& key, std::int64_t order_id, const api::Outcome& outcome, JobRun& run) {
  auto& ledger = context_.ledger;
  switch (outcome.kind) {
    case OutcomeKind::success:
      // Cancelled is the status a cancel leads to; the answer's `order` is not needed here.
      ledger.mark_applied(key, order_id, "Cancelled");
      context_.metrics.count_items(name(), "cancelled");
      spdlog::info("order {} cancelled at the provider", text::printable(key));
      backoff_.note_success();
      ++run.settled;
      return;
    case OutcomeKind::rejected:
    case OutcomeKind::duplicate_reference:
      ledger.mark_rejected(LedgerKind::order_cancel, key, outcome.detail);
      context_.metrics.count_items(name(), "rejected");
      spdlog::warn("order {}: the provider refused the cancel: {}", text::printable(key), outcome.detail);
      backoff_.note_success();
      ++run.settled;
      return;
    case OutcomeKind::ambiguous:
      ledger.mark_unknown(LedgerKind::order_cancel, key, outcome.detail);
      context_.metrics.count_items(name(), "unknown");
      spdlog::info("order {}: unclear whether the cancel was applied ({}); reading the order before any new send",
                   text::printable(key), outcome.detail);
      run.more = true;
      return;
    case OutcomeKind::throttled:
    case OutcomeKind::unauthorized:
    case OutcomeKind::forbidden:
    case OutcomeKind::not_sent:
      requeue_unsent(LedgerKind::order_cancel, key, outcome, run);
      return;
  }
}


}  // namespace fulfillsync::daemon
