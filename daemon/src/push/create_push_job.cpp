#include "push/create_push_job.hpp"

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

// Chunks of entries waiting in the ledger before a create job stops reading its source table.
constexpr int kQueuedChunks = 4;
// A pending entry whose body was built longer ago than this has its row read again before it is sent.
constexpr auto kStaleBody = 2s;

std::string_view noun(LedgerKind kind) {
  switch (kind) {
    case LedgerKind::order_create: return "order";
    case LedgerKind::order_cancel: return "cancel of order";
    case LedgerKind::return_create: return "return";
    case LedgerKind::product_create:
    case LedgerKind::product_update: return "product";  // push_products has its own job
  }
  return "order";
}

// What a lookup found, as records.
std::vector<RemoteRecord> remotes_of(const api::OrderPage& page) {
  std::vector<RemoteRecord> remotes;
  for (const api::Order& order : page) remotes.push_back(remote_of(order));
  return remotes;
}

std::vector<RemoteRecord> remotes_of(const api::ReturnList& list) {
  std::vector<RemoteRecord> remotes;
  for (const api::ReturnOrder& item : list.items) remotes.push_back(remote_of(item));
  return remotes;
}

}  // namespace

CreatePushJob::CreatePushJob(LedgerKind kind, PushContext context, config::JobConfig config, Intake& intake)
    : PushJob(kind == LedgerKind::order_create ? "push_orders" : "push_returns", context, config, &intake),
      kind_(kind),
      intake_of_rows_(intake) {
  assert(kind != LedgerKind::order_cancel && "cancels have their own job");
}

std::string_view CreatePushJob::name() const {
  return kind_ == LedgerKind::order_create ? "push_orders" : "push_returns";
}

std::string CreatePushJob::failpoint_name(std::string_view step) const { return fmt::format("{}.{}", name(), step); }

int CreatePushJob::backlog() { return still_idle(kind_) ? 0 : context_.ledger.waiting(kind_); }

asio::awaitable<JobRun> CreatePushJob::run() {
  JobRun run;
  if (backoff_.holds(run)) co_return run;
  // Backpressure: new rows are read only while few wait to be sent, so a long backlog is read as
  // fast as it is sent rather than all of it before anything is sent.
  const bool idle = still_idle(kind_);
  run.more = idle || context_.ledger.waiting(kind_) < kQueuedChunks * chunk_size() ? poll_source() : true;
  // Nothing waited, and the intake offered nothing: nothing to look up, send or write.
  if (idle && still_idle(kind_, true)) co_return run;
  co_await reconcile(run);
  if (run.back_off == 0ms) co_await send(run);
  const OutboundLedger::Version version = context_.ledger.version({kind_});
  const bool written = co_await context_.results.flush_async(
      kind_ == LedgerKind::order_create ? merchant::SourceKind::orders : merchant::SourceKind::returns, name());
  note_if_idle(kind_, version, written, run);
  co_return run;
}

asio::awaitable<void> CreatePushJob::reconcile(JobRun& run) {
  const auto unknown = context_.ledger.unclear(kind_, context_.unclear_lookup_delay, config_.batch_size);
  if (unknown.size() == static_cast<std::size_t>(config_.batch_size)) run.more = true;
  std::vector<std::string> references;
  for (const LedgerEntry& entry : unknown) references.push_back(entry.source_key);
  const ChunkedLookup<std::string, std::vector<RemoteRecord>> lookup{
      .job = name(),
      .what = "unclear sends",
      .ask = [&](std::span<const std::string> chunk) { return find_created(chunk); },
      .settle = [&](std::size_t first, std::span<const std::string> chunk, const std::vector<RemoteRecord>& found) {
        return settle_unclear(std::span(unknown).subspan(first, chunk.size()), found, run);
      }};
  co_await look_up_in_chunks(references, lookup, context_.stopping, backoff_, run);
}

asio::awaitable<api::Answer<std::vector<RemoteRecord>>> CreatePushJob::find_created(
    std::span<const std::string> references) {
  if (kind_ == LedgerKind::order_create) {
    api::Answer<api::OrderPage> found = co_await provider_.find_orders_by_reference(references);
    co_return std::move(found).map([](const api::OrderPage& page) { return remotes_of(page); });
  }
  api::Answer<api::ReturnList> found = co_await provider_.find_returns_by_reference(references);
  co_return std::move(found).map([](const api::ReturnList& list) { return remotes_of(list); });
}

bool CreatePushJob::settle_unclear(std::span<const LedgerEntry> unclear, const std::vector<RemoteRecord>& found,
                                   JobRun& run) {
  std::map<std::string_view, const RemoteRecord*> by_reference;
  for (const RemoteRecord& remote : found) by_reference.insert_or_assign(remote.reference_id, &remote);
  failpoint(failpoint_name("after_reconcile_lookup"));
  auto batch = context_.ledger.batch();
  std::vector<std::string> absent;
  for (const LedgerEntry& entry : unclear) {
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
    if (!absent.empty()) intake_of_rows_.refresh(absent);
  } catch (const std::exception& e) {
    // Rolled back: the entries stay unknown and are looked up again.
    spdlog::warn("{}: reading {} rows again failed ({}); trying again later", name(), absent.size(), e.what());
    run.ok = false;
    return false;
  }
  batch.commit();
  return true;
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
  if (entries.empty()) co_return;
  if (entries.size() == static_cast<std::size_t>(chunk_size())) run.more = true;
  // A body that waited long (under a backlog the intake pauses, so a later change may not be in the
  // ledger yet) is sent only once its row has been read again: by when the row was last read, not
  // by updated_at, which a throttled send put back as pending moves.
  const auto read_before = timestamps::Clock::now() - kStaleBody;
  const auto waited = [&](const LedgerEntry& entry) {
    return timestamps::parse_iso8601(entry.read_at).value_or(read_before) <= read_before;
  };
  // Read again, a chunk is no more than the rate budget lets leave in that time: each body leaves
  // within about kStaleBody of its read, not a whole chunk's time later.
  if (const auto fresh = static_cast<std::size_t>(chunk_size(kStaleBody));
      entries.size() > fresh && std::any_of(entries.begin(), entries.end(), waited)) {
    entries.resize(fresh);
    run.more = true;
  }
  std::vector<std::string> stale;
  for (const LedgerEntry& entry : entries) {
    if (waited(entry)) stale.push_back(entry.source_key);
  }
  {
    // Opened only for a write: most runs have no stale body and no cancelled order.
    std::optional<OutboundLedger::Batch> batch;
    if (!stale.empty()) {
      batch.emplace(context_.ledger);
      try {
        intake_of_rows_.refresh(stale);
      } catch (const std::exception& e) {
        spdlog::warn("{}: reading {} waiting rows again failed ({}); trying again later", name(), stale.size(),
                     e.what());
        run.ok = false;
        co_return;  // rolled back: nothing is sent without its row's latest version
      }
      // New versions moved to the back of the queue: what took their place was not read again, and
      // waits for the next chunk.
      std::set<std::string, std::less<>> checked;
      for (const LedgerEntry& entry : entries) checked.insert(entry.source_key);
      entries = context_.ledger.in_state(kind_, LedgerState::pending, chunk_size());
      if (std::erase_if(entries, [&](const LedgerEntry& entry) { return !checked.contains(entry.source_key); }) > 0) {
        run.more = true;
      }
    }
    if (kind_ == LedgerKind::order_create) {
      // The chunk's cancels in one lookup; an order found with one is checked again inside the write.
      std::vector<std::string> keys;
      keys.reserve(entries.size());
      for (const LedgerEntry& entry : entries) keys.push_back(entry.source_key);
      const auto cancels = context_.ledger.held_versions(LedgerKind::order_cancel, keys);
      std::erase_if(entries, [&](const LedgerEntry& entry) {
        const auto cancel = cancels.find(entry.source_key);
        if (cancel == cancels.end() || cancel->second.state == LedgerState::withdrawn) return false;
        if (!batch) batch.emplace(context_.ledger);
        return withdraw_if_cancelled(entry);
      });
    }
    if (batch) batch->commit();
  }
  if (entries.empty()) co_return;
  failpoint(failpoint_name("before_send"));

  std::vector<std::string> keys;
  for (const LedgerEntry& entry : entries) keys.push_back(entry.source_key);
  std::vector<api::Answer<RemoteRecord>> answers(entries.size());
  const SendOne send_create = [&](std::size_t i, api::BeforeSend before_send) -> asio::awaitable<api::Outcome> {
    answers[i] = co_await create(entries[i].body, std::move(before_send));
    co_return answers[i].outcome;
  };
  const Announce announce = [&](std::vector<std::size_t> marked) -> asio::awaitable<void> {
    co_await context_.results.announce_sends(
        kind_ == LedgerKind::order_create ? merchant::SourceKind::orders : merchant::SourceKind::returns, entries,
        marked, name());
  };
  // The creates answered since the last commit, marked created together in the next.
  std::vector<OutboundLedger::Created> created;
  const std::function<void()> write_created = [&] {
    const auto answered = std::exchange(created, {});
    context_.ledger.mark_created(kind_, answered);
  };
  co_await send_marked(
      kind_, keys, send_create, run,
      [&](std::size_t i, const api::Outcome&) { record(entries[i], answers[i], run, created); }, announce,
      write_created);
}

asio::awaitable<api::Answer<RemoteRecord>> CreatePushJob::create(std::string body, api::BeforeSend before_send) {
  if (kind_ == LedgerKind::order_create) {
    api::Answer<api::CreatedOrder> created = co_await provider_.create_order(std::move(body), std::move(before_send));
    co_return std::move(created).map([](const api::CreatedOrder& order) { return remote_of(order); });
  }
  api::Answer<api::ReturnOrder> created = co_await provider_.create_return(std::move(body), std::move(before_send));
  co_return std::move(created).map([](const api::ReturnOrder& item) { return remote_of(item); });
}

void CreatePushJob::record(const LedgerEntry& entry, const api::Answer<RemoteRecord>& answer, JobRun& run,
                           std::vector<OutboundLedger::Created>& created) {
  const std::string& key = entry.source_key;
  const api::Outcome& outcome = answer.outcome;
  switch (outcome.kind) {
    case OutcomeKind::success: {
      if (const auto& remote = answer.value) {
        created.push_back({key, remote->id, remote->status, remote->created_at});
        context_.metrics.count_items(name(), "created");
        // Checked first: the arguments are built before spdlog looks at the level, once per order.
        if (spdlog::should_log(spdlog::level::debug)) {
          spdlog::debug("{} {} created as {}", noun(kind_), text::printable(key), remote->id);
        }
      } else {
        const std::string why = answer.why();
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
      requeue_unsent(kind_, key, outcome, run);
      return;
  }
}

}  // namespace fulfillsync::daemon
