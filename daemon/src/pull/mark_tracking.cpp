#include "pull/mark_tracking.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <span>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/common/doubling.hpp"
#include "fulfillsync/daemon/job/failpoints.hpp"
#include "job/chunked_lookup.hpp"
#include "pull/order_page_writer.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;
using namespace std::chrono_literals;
using api::OutcomeKind;

namespace {

// Tracking rows of the merchant database taken in per read.
constexpr std::size_t kIntakeBatch = 1000;
// Orders a page of the sweep: the provider's page limit.
constexpr int kSweepPageSize = 250;
constexpr int kResultBatch = 1000;
// A shipment the provider refused to mark is tried again after 30 s, doubling to an hour.
constexpr Doubling kRefusedMarkRetry{30s, 1h};

std::chrono::seconds retry_after(int attempts) {
  return std::chrono::duration_cast<std::chrono::seconds>(kRefusedMarkRetry.after(attempts));
}

std::string reason_of(const api::TrackingUploadResult& result) {
  if (!result.error) return "refused without a reason";
  return fmt::format("{}: {}", result.error->code.value_or("error"), result.error->message.value_or(""));
}

}  // namespace

MarkTrackingJob::MarkTrackingJob(PullContext context, TrackingMarkLedger& ledger, config::TrackingMarksConfig config)
    : context_(context),
      provider_(context.client),
      ledger_(ledger),
      config_(config),
      backoff_("mark_tracking", context.metrics),
      next_sweep_(std::chrono::steady_clock::now() + config.sweep_interval) {}

asio::awaitable<JobRun> MarkTrackingJob::run() {
  JobRun run;
  if (backoff_.holds(run)) co_return run;
  take_in(run);
  if (!still_idle()) {
    co_await reconcile(run);
    if (run.back_off == 0ms) co_await send(run);
    const bool results_written = write_results();
    note_if_idle(results_written, run);
  }
  if (run.back_off == 0ms && std::chrono::steady_clock::now() >= next_sweep_) co_await sweep(run);
  co_return run;
}

int MarkTrackingJob::backlog() { return still_idle() ? 0 : std::max(0, ledger_.waiting() - held_back_); }

bool MarkTrackingJob::still_idle() {
  if (idle_at_ && *idle_at_ == ledger_.version()) return true;
  idle_at_.reset();
  return false;
}

void MarkTrackingJob::note_if_idle(bool results_written, const JobRun& run) {
  // The version first: a change made after it is seen by the next run.
  const CheckpointStore::Version version = ledger_.version();
  // A mark the provider refused is due again later, an unknown one once quiet: only a ledger with
  // nothing to send, look up or retry is left alone.
  if (results_written && run.ok && !run.more && run.back_off == 0ms && ledger_.waiting() == 0 &&
      ledger_.failing() == 0) {
    idle_at_ = version;
  }
}

// Reading the merchant's tracking rows (not its change counter: the daemon's own writes do not move
// it) is what guarantees that nothing is marked before the merchant database holds it.
void MarkTrackingJob::take_in(JobRun& run) {
  const auto rows = context_.merchant.tracking_to_mark(intake_after_, kIntakeBatch,
                                                       config_.mode == config::TrackingMarkMode::acknowledged);
  if (!rows.empty()) {
    auto batch = ledger_.batch();
    ledger_.offer(rows);
    batch.commit();
  }
  for (const auto& row : rows) listed_now_.insert(row.shipment_id);
  if (rows.size() == kIntakeBatch) {
    intake_after_ = rows.back().shipment_id;
    run.more = true;
  } else {
    intake_after_ = 0;
    listed_ = std::move(listed_now_);
    listed_now_.clear();
    listed_in_full_ = true;
  }
}

// Only the marks the merchant's rows still ask for are sent. The others were queued by a store since
// replaced by an older copy, which marked them and wrote the rows before it went: sent again, they
// would be marked twice. Forgotten, they are queued again should a row ask again.
void MarkTrackingJob::drop_unlisted(std::vector<TrackingMark>& due, JobRun& run) {
  std::vector<std::int64_t> unlisted;
  std::erase_if(due, [&](const TrackingMark& mark) {
    if (listed_now_.contains(mark.shipment_id) || listed_.contains(mark.shipment_id)) return false;
    unlisted.push_back(mark.shipment_id);
    return true;
  });
  if (unlisted.empty()) return;
  run.more = true;
  if (!listed_in_full_) return;  // not read in full yet: they wait
  auto batch = ledger_.batch();
  for (const std::int64_t shipment_id : unlisted) ledger_.forget_pending(shipment_id);
  batch.commit();
  context_.metrics.count_items(name(), "forgotten", static_cast<double>(unlisted.size()));
  spdlog::info("mark_tracking: {} queued marks are of shipments the merchant's tracking rows no longer list as to "
               "be marked (done by a checkpoint store since replaced?): not sent",
               unlisted.size());
}

asio::awaitable<void> MarkTrackingJob::reconcile(JobRun& run) {
  const auto unknown = ledger_.unclear(context_.unclear_lookup_delay, config_.batch_size);
  if (unknown.empty()) co_return;
  std::vector<std::int64_t> orders;
  for (const auto& mark : unknown) orders.push_back(mark.order_id);
  std::sort(orders.begin(), orders.end());
  orders.erase(std::unique(orders.begin(), orders.end()), orders.end());

  std::map<std::int64_t, bool> uploaded;  // shipment id -> flag, of the orders found
  std::set<std::int64_t> looked_up;
  const ChunkedLookup<std::int64_t, api::OrderPage> lookup{
      .job = name(),
      .what = "unclear marks",
      .ask = [&](std::span<const std::int64_t> chunk) { return provider_.find_orders_by_id(chunk, api::Priority::mark); },
      .settle = [&](std::size_t, std::span<const std::int64_t> chunk, const api::OrderPage& found) {
        looked_up.insert(chunk.begin(), chunk.end());
        for (const auto& order : found) {
          for (const auto& shipment : order.shipments) {
            uploaded[shipment.id] = shipment.is_tracking_uploaded.value_or(false);
          }
        }
        return true;
      }};
  // Settled together once every order is read.
  if (!co_await look_up_in_chunks(orders, lookup, context_.stopping, backoff_, run)) co_return;
  failpoint("mark_tracking.after_reconcile_lookup");
  auto batch = ledger_.batch();
  for (const auto& mark : unknown) {
    if (!looked_up.contains(mark.order_id)) continue;
    const auto found = uploaded.find(mark.shipment_id);
    if (found != uploaded.end() && found->second) {
      ledger_.mark_marked(mark.shipment_id);
      context_.metrics.count_items(name(), "adopted");
      ++run.settled;
    } else {
      ledger_.mark_absent(mark.shipment_id);  // sent again with the next batch
    }
  }
  batch.commit();
}

std::optional<std::chrono::milliseconds> MarkTrackingJob::batch_wait_left(const std::vector<TrackingMark>& due) {
  if (static_cast<int>(due.size()) >= config_.batch_size) return std::nullopt;
  const auto now = std::chrono::steady_clock::now();
  if (!filling_since_) filling_since_ = now;
  auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - *filling_since_);
  for (const auto& mark : due) waited = std::max(waited, mark.queued_for);
  if (waited >= config_.batch_wait) return std::nullopt;
  return config_.batch_wait - waited;
}

asio::awaitable<void> MarkTrackingJob::send(JobRun& run) {
  auto due = ledger_.due(config_.batch_size);
  if (static_cast<int>(due.size()) == config_.batch_size) run.more = true;
  drop_unlisted(due, run);
  held_back_ = 0;
  if (due.empty()) filling_since_.reset();
  if (due.empty() || context_.stopping) co_return;
  if (const auto left = batch_wait_left(due)) {
    spdlog::debug("mark_tracking: {} marks wait for a batch of {}, {} ms more at most", due.size(),
                  config_.batch_size, left->count());
    held_back_ = static_cast<int>(due.size());
    run.next_run_within = *left;
    co_return;
  }
  filling_since_.reset();
  std::vector<std::int64_t> shipment_ids;
  for (const auto& mark : due) shipment_ids.push_back(mark.shipment_id);
  {
    auto batch = ledger_.batch();
    for (const auto& mark : due) ledger_.mark_in_flight(mark.shipment_id);
    batch.commit();
  }
  failpoint("mark_tracking.before_send");
  const api::Answer<api::TrackingUploadResponse> answer = co_await provider_.mark_tracking_uploaded(shipment_ids);
  const api::Outcome& outcome = answer.outcome;
  failpoint("mark_tracking.after_response");

  auto batch = ledger_.batch();
  switch (outcome.kind) {
    case OutcomeKind::success: {
      backoff_.note_success();
      std::map<std::int64_t, const api::TrackingUploadResult*> results;
      if (answer) {
        for (const auto& result : answer->results) results[result.shipment_id] = &result;
      } else {
        spdlog::warn("mark_tracking: the answer to a batch of {} cannot be read ({}); looking them up",
                     due.size(), answer.why());
      }
      for (const auto& mark : due) {
        const auto found = results.find(mark.shipment_id);
        if (found == results.end()) {
          ledger_.mark_unknown(mark.shipment_id, "not in the provider's answer");
          context_.metrics.count_items(name(), "unknown");
        } else if (found->second->is_success) {
          ledger_.mark_marked(mark.shipment_id);
          context_.metrics.count_items(name(), "marked");
          ++run.settled;
        } else {
          const std::string reason = reason_of(*found->second);
          spdlog::warn("mark_tracking: the provider refused to mark shipment {} ({}); trying again in {}s",
                       mark.shipment_id, reason, retry_after(mark.attempts + 1).count());
          ledger_.mark_failed(mark.shipment_id, reason, retry_after(mark.attempts + 1));
          context_.metrics.count_items(name(), "failed");
          ++run.settled;
        }
      }
      break;
    }
    case OutcomeKind::rejected:
    case OutcomeKind::duplicate_reference:
      spdlog::warn("mark_tracking: the provider refused a batch of {} ({}); trying again in {}s", due.size(),
                   outcome.detail, retry_after(due.front().attempts + 1).count());
      for (const auto& mark : due) {
        ledger_.mark_failed(mark.shipment_id, outcome.detail, retry_after(mark.attempts + 1));
        context_.metrics.count_items(name(), "failed");
      }
      run.ok = false;
      break;
    case OutcomeKind::ambiguous:
      spdlog::warn("mark_tracking: no clear answer for a batch of {} ({}); looking them up", due.size(),
                   outcome.detail);
      for (const auto& mark : due) {
        ledger_.mark_unknown(mark.shipment_id, outcome.detail);
        context_.metrics.count_items(name(), "unknown");
      }
      run.more = true;
      break;
    default:  // not executed: throttled, refused credentials, not sent
      for (const auto& mark : due) ledger_.mark_not_sent(mark.shipment_id);
      run.ok = outcome.kind == OutcomeKind::throttled;
      run.back_off = backoff_.note_failure(outcome);
      break;
  }
  batch.commit();
  failpoint("mark_tracking.after_ledger_commit");
}

bool MarkTrackingJob::write_results() {
  const auto results = ledger_.unwritten_results(kResultBatch);
  if (results.empty()) return true;
  try {
    context_.merchant.record_tracking_marks(results);
  } catch (const merchant::MerchantDatabaseError&) {
    // The ledger keeps them, and the run fails on the merchant database (as a push job's result
    // write does: ResultWriter::flush_async): the scheduler logs it and the next run writes them.
    context_.metrics.count_result_write_failure();
    throw;
  }
  failpoint("mark_tracking.after_result_write");
  auto batch = ledger_.batch();
  ledger_.results_written(results);
  batch.commit();
  return static_cast<int>(results.size()) < kResultBatch;
}

// The provider's own list of what is not marked: tracking the pull missed reaches the merchant
// database here, and from there the marks. From the starting point on only.
asio::awaitable<void> MarkTrackingJob::sweep(JobRun& run) {
  api::OrderPages pages = provider_.list_orders_with_tracking_not_uploaded(context_.starting_point, kSweepPageSize);
  int shipments = 0;
  while (!context_.stopping) {
    const std::optional<api::Answer<api::OrderPage>> page = co_await pages.next();
    if (!page) break;
    if (!*page) {
      spdlog::warn("mark_tracking: sweep page {}: {}; sweeping again later", pages.page(), page->why());
      run.ok = false;
      run.back_off = backoff_.note_failure(page->outcome);
      co_return;  // the next run sweeps again
    }
    shipments += write_order_page(context_, **page).shipments;
  }
  next_sweep_ = std::chrono::steady_clock::now() + config_.sweep_interval;
  spdlog::info("mark_tracking: sweep read {} shipments the provider lists with tracking not marked uploaded",
               shipments);
}

}  // namespace fulfillsync::daemon
