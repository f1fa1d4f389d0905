#include "push/push_job.hpp"

#include <algorithm>
#include <exception>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/common/invariant.hpp"
#include "fulfillsync/common/printable.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/config/duration.hpp"
#include "fulfillsync/daemon/job/failpoints.hpp"
#include "job/concurrently.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;
using namespace std::chrono_literals;
using api::OutcomeKind;

namespace {

std::string iso_or_empty(const std::optional<api::DateTime>& when) { return when ? when->to_iso8601() : std::string(); }

}  // namespace

RemoteRecord remote_of(const api::Order& order) {
  return {order.id, order.reference_id.value_or(""), order.status, iso_or_empty(order.created_date)};
}

RemoteRecord remote_of(const api::CreatedOrder& created) {
  // Field by field: GCC 12 crashes (an internal compiler error) on the braced return here.
  RemoteRecord remote;
  remote.id = created.id;
  remote.reference_id = created.reference_id.value_or("");
  remote.status = created.status;
  remote.created_at = iso_or_empty(created.created_date);
  return remote;
}

RemoteRecord remote_of(const api::ReturnOrder& created) {
  return {created.id, created.reference_id.value_or(""), created.status, iso_or_empty(created.insert_date)};
}

namespace {

// Batches of source rows one run takes in. One: where a chunk holds a batch (a bulk push), a run
// sends what it read, and a row's first result row is its send's; a pending row is written for what
// waits (the rate budget, a back-off, a chunk smaller than the batch). Four wrote a pending row for
// most orders of a backlog: a third of the result writes.
constexpr int kIntakeBatchesPerRun = 1;
// A send's mark also covers the sends due to leave within this time (see send_marked).
constexpr std::chrono::duration<double> kMarkAhead = 250ms;

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
  // `write_recorded`: see PushJob::send_marked.
  SendCommits(asio::any_io_executor executor, OutboundLedger& ledger, std::string_view job,
              std::function<void()> write_recorded)
      : executor_(executor),
        ledger_(ledger),
        write_recorded_(std::move(write_recorded)),
        after_mark_(fmt::format("{}.after_mark", job)),
        after_response_(fmt::format("{}.after_response", job)),
        after_ledger_commit_(fmt::format("{}.after_ledger_commit", job)),
        committed_(executor, asio::steady_timer::time_point::max()) {}

  // Returns once `mark` (and every answer recorded before it) is durable, `before` awaited first.
  asio::awaitable<void> mark(std::function<void()> mark, std::function<asio::awaitable<void>()> before = {}) {
    if (before) befores_.push_back(std::move(before));
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
      std::exception_ptr failure;
      try {
        // What precedes the marks (their announcements), awaited: the marks arriving meanwhile
        // join this commit, once theirs are done too.
        while (!befores_.empty()) {
          const auto befores = std::exchange(befores_, {});
          for (const auto& before : befores) co_await before();
        }
      } catch (...) {
        failure = std::current_exception();
      }
      const auto marks = std::exchange(marks_, {});
      const auto answers = std::exchange(answers_, {});
      befores_.clear();
      leader_ = false;
      if (!failure) {
        try {
          // Answers alone need no sync of their own: lost to a power cut, their sends are in flight
          // again, looked up before anything is sent (as after a crash), and the next mark's sync
          // covers them. A mark is synced before its request leaves.
          auto batch = ledger_.batch(marks.empty() ? OutboundLedger::Durability::with_next
                                                   : OutboundLedger::Durability::synced);
          for (const auto& record : answers) record();
          if (!answers.empty() && write_recorded_) write_recorded_();
          for (const auto& mark : marks) mark();
          if (!answers.empty()) failpoint(after_response_);
          batch.commit();
          if (!answers.empty()) failpoint(after_ledger_commit_);
          if (!marks.empty()) failpoint(after_mark_);
        } catch (...) {
          failure = std::current_exception();
        }
      }
      failure_ = failure;
      ++generation_;
      committed_.cancel();
    }
    if (failure_) std::rethrow_exception(failure_);
  }

  asio::any_io_executor executor_;
  OutboundLedger& ledger_;
  std::function<void()> write_recorded_;
  std::string after_mark_, after_response_, after_ledger_commit_;
  std::vector<std::function<void()>> marks_, answers_;
  std::vector<std::function<asio::awaitable<void>()>> befores_;
  bool leader_ = false;
  std::uint64_t generation_ = 0;
  std::exception_ptr failure_;  // of the latest commit
  asio::steady_timer committed_;
};

}  // namespace

PushJob::PushJob(std::string_view name, PushContext context, config::JobConfig config, Intake* intake)
    : context_(context),
      provider_(context.client),
      config_(config),
      intake_(intake),
      backoff_(std::string(name), context.metrics) {}

bool PushJob::paused() const { return backoff_.paused(); }

bool PushJob::poll_source() { return intake_ != nullptr && intake_->poll(kIntakeBatchesPerRun); }

bool PushJob::still_idle(LedgerKind kind, bool own_writes_only) {
  if (!idle_at_) return false;
  if (own_writes_only) return idle_at_->own_writes == context_.ledger.own_writes({kind});
  if (*idle_at_ == context_.ledger.version({kind})) return true;
  idle_at_.reset();
  return false;
}

void PushJob::note_if_idle(LedgerKind kind, const OutboundLedger::Version& version, bool results_written,
                           const JobRun& run) {
  idle_at_.reset();
  // A pending, in-flight or unknown entry may be due later (a body to read again, a lookup after its
  // quiet time): only a ledger with none of them is left alone.
  if (results_written && run.ok && !run.more && run.back_off == 0ms && context_.ledger.waiting(kind) == 0) {
    idle_at_ = version;
  }
}

void PushJob::requeue_unsent(LedgerKind kind, const std::string& key, const api::Outcome& outcome, JobRun& run) {
  context_.ledger.mark_pending(kind, key, outcome.detail);
  run.ok = run.ok && outcome.kind == OutcomeKind::throttled;
  run.back_off = std::max(run.back_off, backoff_.note_failure(outcome));
}

int PushJob::chunk_size(std::chrono::seconds within) const {
  const auto budget = static_cast<int>(context_.client.options().requests_per_minute * within.count() / 60);
  return std::min(config_.batch_size, std::max(budget, config_.concurrency));
}

asio::awaitable<void> PushJob::send_marked(LedgerKind kind, const std::vector<std::string>& keys, const SendOne& send,
                                          JobRun& run,
                                          const std::function<void(std::size_t, const api::Outcome&)>& record,
                                          const Announce& announce, const std::function<void()>& write_recorded) {
  SendCommits commits(co_await asio::this_coro::executor, context_.ledger, name(), write_recorded);
  // A mark also covers the sends due to leave within kMarkAhead: as many as leave in that time at the
  // pace this chunk's sends have been leaving (at least the concurrency), but no more than the rate
  // budget lets leave in it (none at the production pace). A commit's sync is then shared by what a
  // quarter second sends, however fast the disk and the provider are, and a crash leaves at most
  // that many in flight that had not left, each looked up for a fortieth of a request.
  const double budget_ahead = context_.client.options().requests_per_minute * kMarkAhead.count() / 60;
  const auto concurrency = static_cast<std::size_t>(config_.concurrency);
  std::optional<std::chrono::steady_clock::time_point> first_left;
  std::size_t left = 0;
  // Sends a second since this chunk's first left; until then, the last chunk's.
  const auto pace = [&] {
    if (!first_left) return send_pace_;
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - *first_left;
    return elapsed.count() > 0 ? static_cast<double>(left) / elapsed.count() : send_pace_;
  };
  const auto ahead = [&] {
    const double at_pace = std::max(static_cast<double>(concurrency), pace() * kMarkAhead.count());
    return static_cast<std::size_t>(std::min(budget_ahead, at_pace));
  };
  enum Mark : char { unmarked, marking, marked };
  std::vector<Mark> marks(keys.size(), unmarked);
  std::vector<char> sent(keys.size(), 0);
  std::vector<std::optional<api::Outcome>> outcomes(keys.size());
  bool halt = false;
  std::exception_ptr failure;
  try {
    co_await for_each_concurrently(
        keys.size(), static_cast<std::size_t>(config_.concurrency), [&](std::size_t i) -> asio::awaitable<void> {
          if (halt || context_.stopping) co_return;
          api::BeforeSend mark = [&, i]() -> asio::awaitable<void> {
            if (marks[i] == unmarked) {
              std::vector<std::size_t> due = {i};
              const std::size_t more = ahead();
              for (std::size_t j = i + 1; j < keys.size() && due.size() <= more; ++j) {
                if (marks[j] == unmarked) due.push_back(j);
              }
              for (const std::size_t j : due) marks[j] = marking;
              // Named: GCC 12 mis-destroys a temporary built inside co_await.
              std::function<void()> mark_due = [&, due] {
                std::vector<std::string_view> due_keys;
                due_keys.reserve(due.size());
                for (const std::size_t j : due) due_keys.emplace_back(keys[j]);
                context_.ledger.mark_in_flight(kind, due_keys);
              };
              std::function<asio::awaitable<void>()> announce_due;
              if (announce) announce_due = [&announce, due] { return announce(due); };
              try {
                co_await commits.mark(std::move(mark_due), std::move(announce_due));
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
            if (!first_left) first_left = std::chrono::steady_clock::now();
            ++left;
          };
          outcomes[i] = co_await send(i, std::move(mark));
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
    if (left > 1) send_pace_ = pace();
  } catch (...) {
    failure = std::current_exception();  // a commit that failed: what it held is as it was
  }
  // Marked ahead but never sent (a stop, a halt): pending again. Marked and sent, but with no answer
  // kept (a commit failed): it may have left.
  bool unsent = false;
  for (std::size_t i = 0; i < keys.size(); ++i) unsent = unsent || !sent[i];
  if (!unsent && !failure) co_return;  // every send answered and committed: nothing to put back
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


}  // namespace fulfillsync::daemon
