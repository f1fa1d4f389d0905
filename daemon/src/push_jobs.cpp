#include "fulfillsync/daemon/push_jobs.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/api/models/decode.hpp"
#include "fulfillsync/config/duration.hpp"
#include "fulfillsync/daemon/concurrently.hpp"
#include "fulfillsync/daemon/failpoints.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;
using namespace std::chrono_literals;
using api::OutcomeKind;

namespace {

// Reference ids per lookup: a URL of a few kilobytes with typical ids; far below the page limit (250).
constexpr std::size_t kLookupChunk = 40;
// Chunks of entries waiting in the ledger before a create job stops reading its source table.
constexpr int kQueuedChunks = 4;

struct Remote {
  std::int64_t id = 0;
  std::string status;
};

std::string_view noun(LedgerKind kind) {
  switch (kind) {
    case LedgerKind::order_create: return "order";
    case LedgerKind::order_cancel: return "cancel of order";
    case LedgerKind::return_create: return "return";
  }
  return "order";
}

// The id and status in a create's answer.
std::optional<Remote> created_of(LedgerKind kind, const api::Outcome& outcome, api::ApiVersion version,
                                 std::string& why) {
  if (kind == LedgerKind::order_create) {
    auto order = api::decode<api::Order>(outcome.response.body, version);
    if (order) return Remote{order->id, order->status};
    why = order.error().to_string();
  } else {
    auto created = api::decode<api::ReturnOrder>(outcome.response.body, version);
    if (created) return Remote{created->id, created->status};
    why = created.error().to_string();
  }
  return std::nullopt;
}

// Reference id -> what the provider has, from one lookup page.
std::optional<std::map<std::string, Remote, std::less<>>> found_in(LedgerKind kind, const api::Outcome& outcome,
                                                                   api::ApiVersion version, std::string& why) {
  std::map<std::string, Remote, std::less<>> found;
  const auto add = [&](const auto& items) {
    for (const auto& item : items) {
      if (item.reference_id) found.insert_or_assign(*item.reference_id, Remote{item.id, item.status});
    }
  };
  if (kind == LedgerKind::order_create) {
    auto page = api::decode<api::OrderPage>(outcome.response.body, version);
    if (!page) {
      why = page.error().to_string();
      return std::nullopt;
    }
    add(*page);
  } else {
    auto list = api::decode<api::ReturnList>(outcome.response.body, version);
    if (!list) {
      why = list.error().to_string();
      return std::nullopt;
    }
    add(list->items);
  }
  return found;
}

// After a 429 or refused credentials the rest of a chunk is not sent: it would meet the same answer.
bool halts_the_rest(const api::Outcome& outcome) {
  return outcome.kind == OutcomeKind::throttled || outcome.kind == OutcomeKind::unauthorized ||
         outcome.kind == OutcomeKind::forbidden;
}

}  // namespace

PushJob::PushJob(std::string_view name, PushContext context, config::JobConfig config,
                 std::function<bool()> poll_source)
    : context_(context),
      config_(config),
      poll_source_(std::move(poll_source)),
      backoff_(std::string(name), context.metrics) {}

bool PushJob::paused() const { return backoff_.paused(); }

int PushJob::chunk_size() const {
  const int ten_seconds = std::max(context_.client.options().requests_per_minute / 6, config_.concurrency);
  return std::min(config_.batch_size, ten_seconds);
}

// --- creates ----------------------------------------------------------------------------------

CreatePushJob::CreatePushJob(LedgerKind kind, PushContext context, config::JobConfig config,
                             std::function<bool()> poll_source)
    : PushJob(kind == LedgerKind::order_create ? "push_orders" : "push_returns", context, config,
              std::move(poll_source)),
      kind_(kind) {
  assert(kind != LedgerKind::order_cancel && "cancels have their own job");
}

std::string_view CreatePushJob::name() const {
  return kind_ == LedgerKind::order_create ? "push_orders" : "push_returns";
}

std::string CreatePushJob::failpoint_name(std::string_view step) const { return fmt::format("{}.{}", name(), step); }

int CreatePushJob::backlog() { return context_.ledger.waiting(kind_); }

asio::awaitable<JobRun> CreatePushJob::run() {
  JobRun run;
  if (backoff_.holds(run)) co_return run;
  // Backpressure: new rows are read only while few wait to be sent, so a long backlog is read as
  // fast as it is sent rather than all of it before anything is sent.
  run.more = context_.ledger.waiting(kind_) < kQueuedChunks * chunk_size() ? poll_source_() : true;
  co_await reconcile(run);
  if (run.back_off == 0ms) co_await send(run);
  context_.results.flush(kind_ == LedgerKind::order_create ? merchant::SourceKind::orders : merchant::SourceKind::returns,
                         name());
  co_return run;
}

asio::awaitable<void> CreatePushJob::reconcile(JobRun& run) {
  const auto unknown = context_.ledger.unclear(kind_, context_.unclear_lookup_delay, config_.batch_size);
  if (unknown.size() == static_cast<std::size_t>(config_.batch_size)) run.more = true;
  for (std::size_t first = 0; first < unknown.size() && !context_.stopping; first += kLookupChunk) {
    const std::size_t last = std::min(first + kLookupChunk, unknown.size());
    std::string ids;
    for (std::size_t i = first; i < last; ++i) ids += (i == first ? "" : ",") + unknown[i].source_key;
    const bool orders = kind_ == LedgerKind::order_create;
    api::ApiRequest request{.method = "GET",
                            .route = orders ? "/order" : "/return",
                            .path = orders ? "/order" : "/return",
                            .query = {{"ReferenceIds", ids}, {"Limit", "250"}},
                            .priority = api::Priority::push};
    const api::Outcome outcome = co_await context_.client.call(std::move(request));
    std::string why;
    const auto found = outcome.ok() ? found_in(kind_, outcome, context_.version, why) : std::nullopt;
    if (!found) {
      run.ok = false;
      if (outcome.ok()) {
        spdlog::warn("{}: looking up {} unclear sends: the answer cannot be read ({}); trying again later", name(),
                     last - first, why);
        run.back_off = backoff_.note_failure(outcome);
      } else {
        spdlog::warn("{}: looking up {} unclear sends failed: {}", name(), last - first, outcome.detail);
        run.back_off = backoff_.note_failure(outcome);
      }
      co_return;
    }
    backoff_.note_success();
    failpoint(failpoint_name("after_reconcile_lookup"));
    auto batch = context_.ledger.batch();
    for (std::size_t i = first; i < last; ++i) {
      const LedgerEntry& entry = unknown[i];
      if (const auto it = found->find(entry.source_key); it != found->end()) {
        context_.ledger.mark_created(kind_, entry.source_key, it->second.id, it->second.status);
        context_.metrics.count_items(name(), "adopted");
        spdlog::info("{} {}: the provider has it as {}; adopted", noun(kind_), entry.source_key, it->second.id);
      } else if (!withdraw_if_cancelled(entry)) {
        context_.ledger.mark_pending(kind_, entry.source_key, "not found at the provider after an unclear send");
        context_.metrics.count_items(name(), "retried");
        spdlog::info("{} {}: not at the provider; sending again", noun(kind_), entry.source_key);
      }
      ++run.settled;
    }
    batch.commit();
  }
}

bool CreatePushJob::withdraw_if_cancelled(const LedgerEntry& entry) {
  if (kind_ != LedgerKind::order_create) return false;
  const auto cancel = context_.ledger.find(LedgerKind::order_cancel, entry.source_key);
  if (!cancel || cancel->state == LedgerState::withdrawn) return false;
  context_.ledger.withdraw(LedgerKind::order_create, entry.source_key, cancel->content_hash, kCancelledBeforeCreation);
  context_.ledger.withdraw(LedgerKind::order_cancel, entry.source_key, cancel->content_hash, kCancelledBeforeCreation);
  context_.metrics.count_items(name(), "withdrawn");
  spdlog::info("order {}: {}", entry.source_key, kCancelledBeforeCreation);
  return true;
}

asio::awaitable<void> CreatePushJob::send(JobRun& run) {
  if (context_.stopping) co_return;
  std::vector<LedgerEntry> entries = context_.ledger.in_state(kind_, LedgerState::pending, chunk_size());
  if (entries.size() == static_cast<std::size_t>(chunk_size())) run.more = true;
  {
    auto batch = context_.ledger.batch();
    std::erase_if(entries, [&](const LedgerEntry& entry) { return withdraw_if_cancelled(entry); });
    for (const auto& entry : entries) context_.ledger.mark_in_flight(kind_, entry.source_key);
    batch.commit();
  }
  if (entries.empty()) co_return;
  failpoint(failpoint_name("before_send"));

  // Nothing for an entry left unsent: a stop, or a 429/401/403 that halts the rest of the chunk.
  std::vector<std::optional<api::Outcome>> outcomes(entries.size());
  bool halt = false;
  const bool orders = kind_ == LedgerKind::order_create;
  co_await for_each_concurrently(entries.size(), static_cast<std::size_t>(config_.concurrency),
                                 [&](std::size_t i) -> asio::awaitable<void> {
                                   if (halt || context_.stopping) co_return;
                                   // A named request: GCC 12 mis-destroys a temporary built inside co_await.
                                   api::ApiRequest request{.method = "POST",
                                                           .route = orders ? "/order" : "/return",
                                                           .path = orders ? "/order" : "/return",
                                                           .body = entries[i].body,
                                                           .priority = api::Priority::push,
                                                           .idempotent = false,
                                                           .with_channel = true};
                                   outcomes[i] = co_await context_.client.call(std::move(request));
                                   halt = halt || halts_the_rest(*outcomes[i]);
                                 });
  failpoint(failpoint_name("after_response"));
  auto batch = context_.ledger.batch();
  for (std::size_t i = 0; i < entries.size(); ++i) record(entries[i], outcomes[i], run);
  batch.commit();
  failpoint(failpoint_name("after_ledger_commit"));
}

void CreatePushJob::record(const LedgerEntry& entry, const std::optional<api::Outcome>& answer, JobRun& run) {
  const std::string& key = entry.source_key;
  if (!answer) {
    context_.ledger.mark_pending(kind_, key, "not sent yet");
    run.more = true;
    return;
  }
  const api::Outcome& outcome = *answer;
  switch (outcome.kind) {
    case OutcomeKind::success: {
      std::string why;
      if (const auto remote = created_of(kind_, outcome, context_.version, why)) {
        context_.ledger.mark_created(kind_, key, remote->id, remote->status);
        context_.metrics.count_items(name(), "created");
        spdlog::debug("{} {} created as {}", noun(kind_), key, remote->id);
      } else {
        context_.ledger.mark_unknown(kind_, key, "created, but the answer cannot be read: " + why);
        context_.metrics.count_items(name(), "unknown");
        spdlog::warn("{} {}: created, but the answer cannot be read ({}); looking it up", noun(kind_), key, why);
      }
      backoff_.note_success();
      ++run.settled;
      return;
    }
    case OutcomeKind::rejected:
      context_.ledger.mark_rejected(kind_, key, outcome.detail);
      context_.metrics.count_items(name(), "rejected");
      spdlog::warn("{} {} rejected by the provider: {}", noun(kind_), key, outcome.detail);
      backoff_.note_success();
      ++run.settled;
      return;
    case OutcomeKind::duplicate_reference:
    case OutcomeKind::ambiguous:
      context_.ledger.mark_unknown(kind_, key, outcome.detail);
      context_.metrics.count_items(name(), "unknown");
      spdlog::info("{} {}: unclear whether it was created ({}); looking it up before any new send", noun(kind_), key,
                   outcome.detail);
      run.more = true;
      return;
    case OutcomeKind::throttled:
    case OutcomeKind::unauthorized:
    case OutcomeKind::forbidden:
    case OutcomeKind::not_sent:
      context_.ledger.mark_pending(kind_, key, outcome.detail);
      run.ok = run.ok && outcome.kind == OutcomeKind::throttled;
      run.back_off = std::max(run.back_off, backoff_.note_failure(outcome));
      return;
  }
}

// --- cancels ----------------------------------------------------------------------------------

int CancelPushJob::backlog() { return context_.ledger.waiting(LedgerKind::order_cancel); }

asio::awaitable<JobRun> CancelPushJob::run() {
  JobRun run;
  if (backoff_.holds(run)) co_return run;
  run.more = poll_source_();
  auto& ledger = context_.ledger;
  // Cancels are safe to repeat, so an unclear one is simply sent again.
  struct Send {
    LedgerEntry cancel;
    std::int64_t order_id;
  };
  std::vector<Send> sends;
  {
    auto batch = ledger.batch();
    for (auto& cancel : ledger.in_state(LedgerKind::order_cancel, LedgerState::unknown, config_.batch_size)) {
      ledger.mark_pending(LedgerKind::order_cancel, cancel.source_key, cancel.last_error);
    }
    const auto pending = ledger.in_state(LedgerKind::order_cancel, LedgerState::pending, config_.batch_size);
    for (const auto& cancel : pending) {
      if (static_cast<int>(sends.size()) >= chunk_size() || context_.stopping) {
        run.more = true;
        break;
      }
      const auto create = ledger.find(LedgerKind::order_create, cancel.source_key);
      if (!create) continue;  // not possible: a cancel is queued only for a sent create
      if (create->state == LedgerState::created && create->remote_id) {
        ledger.mark_in_flight(LedgerKind::order_cancel, cancel.source_key);
        sends.push_back({cancel, *create->remote_id});
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
  if (!sends.empty()) {
    failpoint("push_cancels.before_send");
    std::vector<std::optional<api::Outcome>> outcomes(sends.size());
    bool halt = false;
    co_await for_each_concurrently(sends.size(), static_cast<std::size_t>(config_.concurrency),
                                   [&](std::size_t i) -> asio::awaitable<void> {
                                     if (halt || context_.stopping) co_return;
                                     api::ApiRequest request{.method = "POST",
                                                             .route = "/order/{orderId}:cancel",
                                                             .path = fmt::format("/order/{}:cancel", sends[i].order_id),
                                                             .priority = api::Priority::push,
                                                             .idempotent = true,
                                                             .with_channel = true};
                                     outcomes[i] = co_await context_.client.call(std::move(request));
                                     halt = halt || halts_the_rest(*outcomes[i]);
                                   });
    failpoint("push_cancels.after_response");
    auto batch = ledger.batch();
    for (std::size_t i = 0; i < sends.size(); ++i) record(sends[i].cancel.source_key, sends[i].order_id, outcomes[i], run);
    batch.commit();
    failpoint("push_cancels.after_ledger_commit");
  }
  context_.results.flush(merchant::SourceKind::orders, name());
  co_return run;
}

void CancelPushJob::record(const std::string& key, std::int64_t order_id, const std::optional<api::Outcome>& answer,
                           JobRun& run) {
  auto& ledger = context_.ledger;
  if (!answer) {
    ledger.mark_pending(LedgerKind::order_cancel, key, "not sent yet");
    run.more = true;
    return;
  }
  const api::Outcome& outcome = *answer;
  switch (outcome.kind) {
    case OutcomeKind::success:
      // Cancelled is the status a cancel leads to; the answer's `order` is not needed here.
      ledger.mark_created(LedgerKind::order_cancel, key, order_id, "Cancelled");
      context_.metrics.count_items(name(), "cancelled");
      spdlog::info("order {} cancelled at the provider", key);
      backoff_.note_success();
      ++run.settled;
      return;
    case OutcomeKind::rejected:
    case OutcomeKind::duplicate_reference:
      ledger.mark_rejected(LedgerKind::order_cancel, key, outcome.detail);
      context_.metrics.count_items(name(), "rejected");
      spdlog::warn("order {}: the provider refused the cancel: {}", key, outcome.detail);
      backoff_.note_success();
      ++run.settled;
      return;
    case OutcomeKind::ambiguous:
      ledger.mark_unknown(LedgerKind::order_cancel, key, outcome.detail);
      context_.metrics.count_items(name(), "unknown");
      run.more = true;
      return;
    case OutcomeKind::throttled:
    case OutcomeKind::unauthorized:
    case OutcomeKind::forbidden:
    case OutcomeKind::not_sent:
      ledger.mark_pending(LedgerKind::order_cancel, key, outcome.detail);
      run.ok = run.ok && outcome.kind == OutcomeKind::throttled;
      run.back_off = std::max(run.back_off, backoff_.note_failure(outcome));
      return;
  }
}

}  // namespace fulfillsync::daemon
