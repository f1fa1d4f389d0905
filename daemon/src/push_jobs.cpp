#include "fulfillsync/daemon/push_jobs.hpp"

#include <algorithm>
#include <cassert>
#include <exception>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/api/models/decode.hpp"
#include "fulfillsync/common/invariant.hpp"
#include "fulfillsync/common/printable.hpp"
#include "fulfillsync/common/timestamps.hpp"
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
// Order ids per read before cancels leave: the provider's page limit.
constexpr std::size_t kIdsPerRead = 250;
// Chunks of entries waiting in the ledger before a create job stops reading its source table.
constexpr int kQueuedChunks = 4;
// How far ahead of the rate budget's pace a send's mark also covers the sends due next.
constexpr auto kMarkAhead = 100ms;
// A pending entry whose body was built longer ago than this has its row read again before it is sent.
constexpr auto kStaleBody = 2s;

std::string_view noun(LedgerKind kind) {
  switch (kind) {
    case LedgerKind::order_create: return "order";
    case LedgerKind::order_cancel: return "cancel of order";
    case LedgerKind::return_create: return "return";
  }
  return "order";
}

std::string iso_or_empty(const std::optional<api::DateTime>& when) { return when ? when->to_iso8601() : std::string(); }

RemoteRecord remote_of(const api::Order& order) {
  return {order.id, order.reference_id.value_or(""), order.status, iso_or_empty(order.created_date)};
}

RemoteRecord remote_of(const api::ReturnOrder& created) {
  return {created.id, created.reference_id.value_or(""), created.status, iso_or_empty(created.insert_date)};
}

// What a create's answer says was created.
std::optional<RemoteRecord> created_of(LedgerKind kind, const api::Outcome& outcome, api::ApiVersion version,
                                       std::string& why) {
  if (kind == LedgerKind::order_create) {
    auto order = api::decode<api::Order>(outcome.response.body, version);
    if (order) return remote_of(*order);
    why = order.error().to_string();
  } else {
    auto created = api::decode<api::ReturnOrder>(outcome.response.body, version);
    if (created) return remote_of(*created);
    why = created.error().to_string();
  }
  return std::nullopt;
}

// After a 429 or refused credentials the rest of a chunk is not sent: it would meet the same answer.
bool halts_the_rest(const api::Outcome& outcome) {
  return outcome.kind == OutcomeKind::throttled || outcome.kind == OutcomeKind::unauthorized ||
         outcome.kind == OutcomeKind::forbidden;
}

// The ledger changes of a chunk's concurrent sends, in shared commits. A send is marked in flight
// durably before it leaves: the first mark to arrive waits for the sends ready at the same moment to
// add theirs, then commits them all (one fsync). An answer is recorded without waiting: it goes into
// the next commit (the next send's mark, or flush()), so a crash leaves in flight only the sends
// whose answers had just come. Should a commit fail, every mark waiting on it gets the exception,
// and nothing of it is kept.
class SendCommits {
 public:
  SendCommits(asio::any_io_executor executor, OutboundLedger& ledger, std::string_view job)
      : executor_(executor),
        ledger_(ledger),
        after_mark_(fmt::format("{}.after_mark", job)),
        after_response_(fmt::format("{}.after_response", job)),
        after_ledger_commit_(fmt::format("{}.after_ledger_commit", job)),
        committed_(executor, asio::steady_timer::time_point::max()) {}

  // Returns once `mark` (and every answer recorded before it) is durable.
  asio::awaitable<void> mark(std::function<void()> mark) {
    marks_.push_back(std::move(mark));
    co_await commit();
  }

  // Recorded with the next commit.
  void answer(std::function<void()> record) { answers_.push_back(std::move(record)); }

  // Commits the answers not committed yet.
  asio::awaitable<void> flush() {
    if (!answers_.empty() || leader_) co_await commit();
  }

 private:
  asio::awaitable<void> commit() {
    const std::uint64_t generation = generation_;
    if (leader_) {
      // The timer never expires: the leader's cancel() wakes every waiter once its commit is done.
      boost::system::error_code ignored;
      while (generation_ == generation) {
        co_await committed_.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
      }
    } else {
      leader_ = true;
      co_await asio::post(executor_, asio::use_awaitable);  // lets the sends ready now join
      const auto marks = std::exchange(marks_, {});
      const auto answers = std::exchange(answers_, {});
      leader_ = false;
      try {
        auto batch = ledger_.batch();
        for (const auto& record : answers) record();
        for (const auto& mark : marks) mark();
        if (!answers.empty()) failpoint(after_response_);
        batch.commit();
        failure_ = nullptr;
        if (!answers.empty()) failpoint(after_ledger_commit_);
        if (!marks.empty()) failpoint(after_mark_);
      } catch (...) {
        failure_ = std::current_exception();
      }
      ++generation_;
      committed_.cancel();
    }
    if (failure_) std::rethrow_exception(failure_);
  }

  asio::any_io_executor executor_;
  OutboundLedger& ledger_;
  std::string after_mark_, after_response_, after_ledger_commit_;
  std::vector<std::function<void()>> marks_, answers_;
  bool leader_ = false;
  std::uint64_t generation_ = 0;
  std::exception_ptr failure_;  // of the latest commit
  asio::steady_timer committed_;
};

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

asio::awaitable<std::optional<std::vector<RemoteRecord>>> PushJob::look_up(LedgerKind kind, std::string filter,
                                                                          std::string values, JobRun& run) {
  const bool returns = kind == LedgerKind::return_create;
  api::ApiRequest request{.method = "GET",
                          .route = returns ? "/return" : "/order",
                          .path = returns ? "/return" : "/order",
                          .query = {{std::move(filter), std::move(values)}, {"Limit", "250"}},
                          .priority = api::Priority::push};
  const api::Outcome outcome = co_await context_.client.call(std::move(request));
  std::string why = outcome.detail;
  std::optional<std::vector<RemoteRecord>> found;
  const auto read = [&](const auto& decoded, const auto& items) {
    if (!decoded) {
      why = "the answer cannot be read: " + decoded.error().to_string();
      return;
    }
    found.emplace();
    for (const auto& item : items(*decoded)) found->push_back(remote_of(item));
  };
  if (outcome.ok() && returns) {
    read(api::decode<api::ReturnList>(outcome.response.body, context_.version),
         [](const api::ReturnList& list) -> const auto& { return list.items; });
  } else if (outcome.ok()) {
    read(api::decode<api::OrderPage>(outcome.response.body, context_.version),
         [](const api::OrderPage& page) -> const auto& { return page; });
  }
  if (!found) {
    run.ok = false;
    run.back_off = backoff_.note_failure(outcome);
    spdlog::warn("{}: looking up unclear sends failed ({}); trying again later", name(), why);
    co_return std::nullopt;
  }
  backoff_.note_success();
  co_return found;
}

asio::awaitable<void> PushJob::send_marked(LedgerKind kind, const std::vector<std::string>& keys,
                                          std::vector<api::ApiRequest> requests, JobRun& run,
                                          const std::function<void(std::size_t, const api::Outcome&)>& record) {
  assert(keys.size() == requests.size());
  SendCommits commits(co_await asio::this_coro::executor, context_.ledger, name());
  // A mark also covers the sends due next, as many as the rate budget lets leave within
  // kMarkAhead (none at the production pace, up to the concurrency when unbounded): fewer commits,
  // and nothing marked long before it leaves.
  const auto per_window = static_cast<std::size_t>(context_.client.options().requests_per_minute *
                                                   std::chrono::duration<double>(kMarkAhead).count() / 60);
  const std::size_t ahead = std::min(per_window, static_cast<std::size_t>(config_.concurrency));
  enum Mark : char { unmarked, marking, marked };
  std::vector<Mark> marks(requests.size(), unmarked);
  std::vector<char> sent(requests.size(), 0);
  std::vector<std::optional<api::Outcome>> outcomes(requests.size());
  bool halt = false;
  std::exception_ptr failure;
  try {
    co_await for_each_concurrently(
        requests.size(), static_cast<std::size_t>(config_.concurrency), [&](std::size_t i) -> asio::awaitable<void> {
          if (halt || context_.stopping) co_return;
          requests[i].before_send = [&, i]() -> asio::awaitable<void> {
            if (marks[i] == unmarked) {
              std::vector<std::size_t> due = {i};
              for (std::size_t j = i + 1; j < requests.size() && due.size() <= ahead; ++j) {
                if (marks[j] == unmarked) due.push_back(j);
              }
              for (const std::size_t j : due) marks[j] = marking;
              // Named: GCC 12 mis-destroys a temporary built inside co_await.
              std::function<void()> mark_due = [&, due] {
                for (const std::size_t j : due) context_.ledger.mark_in_flight(kind, keys[j]);
              };
              try {
                co_await commits.mark(std::move(mark_due));
              } catch (...) {
                for (const std::size_t j : due) marks[j] = unmarked;
                throw;
              }
              for (const std::size_t j : due) marks[j] = marked;
            } else if (marks[i] == marking) {
              // Marked ahead by a commit still under way: joins it (or, done since, commits nothing).
              std::function<void()> nothing = [] {};
              co_await commits.mark(std::move(nothing));
              marks[i] = marked;
            }
            sent[i] = 1;
          };
          outcomes[i] = co_await context_.client.call(std::move(requests[i]));
          halt = halt || halts_the_rest(*outcomes[i]);
          if (sent[i]) {
            commits.answer([&, i] { record(i, *outcomes[i]); });
          } else {
            // Ended before it could leave (no token to send it with).
            run.ok = false;
            run.back_off = std::max(run.back_off, backoff_.note_failure(*outcomes[i]));
          }
        });
    co_await commits.flush();
  } catch (...) {
    failure = std::current_exception();  // a commit that failed: what it held is as it was
  }
  // Marked ahead but never sent (a stop, a halt): pending again. Marked and sent, but with no answer
  // kept (a commit failed): it may have left.
  auto batch = context_.ledger.batch();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!sent[i]) run.more = true;
    if (marks[i] == marked && !sent[i]) {
      context_.ledger.mark_pending(kind, keys[i], "not sent yet");
    } else if (failure && sent[i] && context_.ledger.find(kind, keys[i])->state == LedgerState::in_flight) {
      context_.ledger.mark_unknown(kind, keys[i], "interrupted while in flight");
    }
  }
  batch.commit();
  if (failure) std::rethrow_exception(failure);
}

// --- creates ----------------------------------------------------------------------------------

CreatePushJob::CreatePushJob(LedgerKind kind, PushContext context, config::JobConfig config,
                             std::function<bool()> poll_source,
                             std::function<void(std::span<const std::string>)> refresh_source)
    : PushJob(kind == LedgerKind::order_create ? "push_orders" : "push_returns", context, config,
              std::move(poll_source)),
      kind_(kind),
      refresh_source_(std::move(refresh_source)) {
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
    const auto found = co_await look_up(kind_, "ReferenceIds", std::move(ids), run);
    if (!found) co_return;
    std::map<std::string_view, const RemoteRecord*> by_reference;
    for (const RemoteRecord& remote : *found) by_reference.insert_or_assign(remote.reference_id, &remote);
    failpoint(failpoint_name("after_reconcile_lookup"));
    auto batch = context_.ledger.batch();
    std::vector<std::string> absent;
    for (std::size_t i = first; i < last; ++i) {
      const LedgerEntry& entry = unknown[i];
      if (const auto it = by_reference.find(entry.source_key); it != by_reference.end()) {
        const RemoteRecord& remote = *it->second;
        context_.ledger.mark_created(kind_, entry.source_key, remote.id, remote.status, remote.created_at);
        context_.metrics.count_items(name(), "adopted");
        spdlog::info("{} {}: the provider has it as {}; adopted", noun(kind_), text::printable(entry.source_key),
                     remote.id);
      } else if (!withdraw_if_cancelled(entry)) {
        context_.ledger.mark_pending(kind_, entry.source_key, "not found at the provider after an unclear send");
        // Looked up without a body built here (OutboundLedger::look_up_first): forgetting its
        // version makes the refresh below build the row's body.
        if (entry.body.empty()) context_.ledger.offer(kind_, entry.source_key, "", "");
        if (entry.note == kCreatedByAnEarlierSend) context_.ledger.set_note(kind_, entry.source_key, "");
        context_.metrics.count_items(name(), "retried");
        spdlog::info("{} {}: not at the provider; sending the row as it is now", noun(kind_),
                     text::printable(entry.source_key));
        absent.push_back(entry.source_key);
      }
      ++run.settled;
    }
    // The merchant may have changed the row since the body was built: what goes out is its latest version.
    try {
      if (!absent.empty()) refresh_source_(absent);
    } catch (const std::exception& e) {
      // Rolled back: the entries stay unknown and are looked up again.
      spdlog::warn("{}: reading {} rows again failed ({}); trying again later", name(), absent.size(), e.what());
      run.ok = false;
      co_return;
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
  spdlog::info("order {}: {}", text::printable(entry.source_key), kCancelledBeforeCreation);
  return true;
}

asio::awaitable<void> CreatePushJob::send(JobRun& run) {
  if (context_.stopping) co_return;
  std::vector<LedgerEntry> entries = context_.ledger.in_state(kind_, LedgerState::pending, chunk_size());
  if (entries.size() == static_cast<std::size_t>(chunk_size())) run.more = true;
  // A body that waited long (under a backlog the intake pauses, so a later change may not be in the
  // ledger yet) is sent only once its row has been read again.
  std::vector<std::string> stale;
  const auto built_before = timestamps::Clock::now() - kStaleBody;
  for (const LedgerEntry& entry : entries) {
    if (timestamps::parse_iso8601(entry.updated_at).value_or(built_before) <= built_before) {
      stale.push_back(entry.source_key);
    }
  }
  {
    auto batch = context_.ledger.batch();
    if (!stale.empty()) {
      try {
        refresh_source_(stale);
      } catch (const std::exception& e) {
        spdlog::warn("{}: reading {} waiting rows again failed ({}); trying again later", name(), stale.size(),
                     e.what());
        run.ok = false;
        co_return;  // rolled back: nothing is sent without its row's latest version
      }
      entries = context_.ledger.in_state(kind_, LedgerState::pending, chunk_size());
    }
    std::erase_if(entries, [&](const LedgerEntry& entry) { return withdraw_if_cancelled(entry); });
    batch.commit();
  }
  if (entries.empty()) co_return;
  failpoint(failpoint_name("before_send"));

  const bool orders = kind_ == LedgerKind::order_create;
  std::vector<std::string> keys;
  std::vector<api::ApiRequest> requests;
  for (const LedgerEntry& entry : entries) {
    keys.push_back(entry.source_key);
    requests.push_back({.method = "POST",
                        .route = orders ? "/order" : "/return",
                        .path = orders ? "/order" : "/return",
                        .body = entry.body,
                        .priority = api::Priority::push,
                        .idempotent = false,
                        .with_channel = true});
  }
  co_await send_marked(kind_, keys, std::move(requests), run,
                       [&](std::size_t i, const api::Outcome& outcome) { record(entries[i], outcome, run); });
}

void CreatePushJob::record(const LedgerEntry& entry, const api::Outcome& outcome, JobRun& run) {
  const std::string& key = entry.source_key;
  switch (outcome.kind) {
    case OutcomeKind::success: {
      std::string why;
      if (const auto remote = created_of(kind_, outcome, context_.version, why)) {
        context_.ledger.mark_created(kind_, key, remote->id, remote->status, remote->created_at);
        context_.metrics.count_items(name(), "created");
        spdlog::debug("{} {} created as {}", noun(kind_), text::printable(key), remote->id);
      } else {
        context_.ledger.mark_unknown(kind_, key, "created, but the answer cannot be read: " + why);
        context_.metrics.count_items(name(), "unknown");
        spdlog::warn("{} {}: created, but the answer cannot be read ({}); looking it up", noun(kind_),
                     text::printable(key), why);
      }
      backoff_.note_success();
      ++run.settled;
      return;
    }
    case OutcomeKind::rejected:
      context_.ledger.mark_rejected(kind_, key, outcome.detail);
      context_.metrics.count_items(name(), "rejected");
      spdlog::warn("{} {} rejected by the provider: {}", noun(kind_), text::printable(key), outcome.detail);
      backoff_.note_success();
      ++run.settled;
      return;
    case OutcomeKind::duplicate_reference:
    case OutcomeKind::ambiguous:
      context_.ledger.mark_unknown(kind_, key, outcome.detail);
      // Not this send's doing: the lookup will find what an earlier one created.
      if (outcome.kind == OutcomeKind::duplicate_reference) context_.ledger.set_note(kind_, key, kCreatedByAnEarlierSend);
      context_.metrics.count_items(name(), "unknown");
      spdlog::info("{} {}: unclear whether it was created ({}); looking it up before any new send", noun(kind_),
                   text::printable(key), outcome.detail);
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
  co_await reconcile(run);
  if (run.back_off > 0ms) {
    context_.results.flush(merchant::SourceKind::orders, name());
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
    context_.results.flush(merchant::SourceKind::orders, name());
    co_return run;
  }
  if (!keys.empty()) {
    failpoint("push_cancels.before_send");
    std::vector<api::ApiRequest> requests;
    for (const std::int64_t order_id : order_ids) {
      // Not idempotent for the client: a lost answer is settled by reading the order, not by a resend.
      requests.push_back({.method = "POST",
                          .route = "/order/{orderId}:cancel",
                          .path = fmt::format("/order/{}:cancel", order_id),
                          .priority = api::Priority::push,
                          .idempotent = false,
                          .with_channel = true});
    }
    co_await send_marked(
        LedgerKind::order_cancel, keys, std::move(requests), run,
        [&](std::size_t i, const api::Outcome& outcome) { record(keys[i], order_ids[i], outcome, run); });
  }
  context_.results.flush(merchant::SourceKind::orders, name());
  co_return run;
}

asio::awaitable<bool> CancelPushJob::skip_already_cancelled(std::vector<std::string>& keys,
                                                            std::vector<std::int64_t>& order_ids, JobRun& run) {
  std::map<std::int64_t, std::string> status_of;
  for (std::size_t first = 0; first < order_ids.size(); first += kIdsPerRead) {
    std::string ids;
    for (std::size_t i = first; i < std::min(first + kIdsPerRead, order_ids.size()); ++i) {
      ids += fmt::format("{}{}", ids.empty() ? "" : ",", order_ids[i]);
    }
    const auto found = co_await look_up(LedgerKind::order_cancel, "IDs", std::move(ids), run);
    if (!found) co_return false;
    for (const RemoteRecord& remote : *found) status_of.insert_or_assign(remote.id, remote.status);
  }
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
  for (std::size_t first = 0; first < unknown.size() && !context_.stopping; first += kLookupChunk) {
    const std::size_t last = std::min(first + kLookupChunk, unknown.size());
    std::string ids;
    std::map<std::int64_t, std::string> key_of;
    for (std::size_t i = first; i < last; ++i) {
      const auto create = ledger.find(LedgerKind::order_create, unknown[i].source_key);
      // A cancel is sent only for a created order, so its create has the id; a store that says
      // otherwise has lost track of what was sent, and reading the missing id would be undefined.
      FULFILLSYNC_INVARIANT(create && create->remote_id, "an unclear cancel belongs to a created order");
      ids += fmt::format("{}{}", ids.empty() ? "" : ",", *create->remote_id);
      key_of.emplace(*create->remote_id, unknown[i].source_key);
    }
    const auto found = co_await look_up(LedgerKind::order_cancel, "IDs", std::move(ids), run);
    if (!found) co_return;
    std::map<std::int64_t, std::string> status_of;
    for (const RemoteRecord& remote : *found) status_of.insert_or_assign(remote.id, remote.status);
    failpoint("push_cancels.after_reconcile_lookup");
    auto batch = ledger.batch();
    for (const auto& [order_id, key] : key_of) {
      const auto status = status_of.find(order_id);
      if (status != status_of.end() && status->second == "Cancelled") {
        ledger.mark_created(LedgerKind::order_cancel, key, order_id, "Cancelled");
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
}

void CancelPushJob::record(const std::string& key, std::int64_t order_id, const api::Outcome& outcome, JobRun& run) {
  auto& ledger = context_.ledger;
  switch (outcome.kind) {
    case OutcomeKind::success:
      // Cancelled is the status a cancel leads to; the answer's `order` is not needed here.
      ledger.mark_created(LedgerKind::order_cancel, key, order_id, "Cancelled");
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
      ledger.mark_pending(LedgerKind::order_cancel, key, outcome.detail);
      run.ok = run.ok && outcome.kind == OutcomeKind::throttled;
      run.back_off = std::max(run.back_off, backoff_.note_failure(outcome));
      return;
  }
}

}  // namespace fulfillsync::daemon
