#include "pull/pull_lots.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/common/printable.hpp"
#include "fulfillsync/daemon/job/failpoints.hpp"
#include "fulfillsync/daemon/mapping/pulled_mapping.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;
using namespace std::chrono_literals;
using api::OutcomeKind;

PullLotsJob::PullLotsJob(PullContext context, config::LotsConfig config, bool spread)
    : context_(context),
      provider_(context.client),
      config_(config),
      spread_(spread),
      backoff_("pull_lots", context.metrics) {
  context.metrics.set_pull_interval(name(), config.interval);
}

int PullLotsJob::backlog() {
  // The daemon spreads the reads over the interval and has no backlog to speak of; `once` reads
  // every watched id once.
  if (spread_) return 0;
  return started_ ? static_cast<int>(cycle_.size() - position_) : 1;
}

asio::awaitable<JobRun> PullLotsJob::run() {
  JobRun run;
  if (backoff_.holds(run)) co_return run;
  const auto now = std::chrono::steady_clock::now();
  if (position_ == cycle_.size()) {
    if (started_ && !spread_) co_return run;  // `once`: one cycle
    if (started_ && now < cycle_started_ + config_.interval) {
      run.back_off = std::chrono::duration_cast<std::chrono::milliseconds>(cycle_started_ + config_.interval - now);
      co_return run;
    }
    // A new cycle: the watch list as it is now; the lots of ids no longer watched go.
    started_ = true;
    cycle_ = watched();
    position_ = 0;
    cycle_started_ = now;
    cycle_started_wall_ = std::chrono::system_clock::now();
    failed_in_cycle_ = false;
    if (const int removed = context_.merchant.remove_lots_except(cycle_); removed > 0) {
      context_.metrics.count_items(name(), "removed", removed);
    }
    if (cycle_.empty()) {
      last_cycle_started_ = cycle_started_wall_;
      if (spread_) run.back_off = std::chrono::duration_cast<std::chrono::milliseconds>(config_.interval);
      co_return run;
    }
  }
  // Spread: the i-th id of n is read at i/n of the interval.
  const auto due = [&](std::size_t i) {
    return cycle_started_ + config_.interval * static_cast<long>(i) / static_cast<long>(cycle_.size());
  };
  if (spread_ && now < due(position_)) {
    run.back_off = std::chrono::duration_cast<std::chrono::milliseconds>(due(position_) - now);
    co_return run;
  }
  const std::int64_t inventory_id = cycle_[position_];
  const api::Answer<api::LotLevels> levels = co_await provider_.lot_levels(inventory_id);
  const api::Outcome& outcome = levels.outcome;
  if (outcome.kind == OutcomeKind::throttled || outcome.kind == OutcomeKind::unauthorized ||
      outcome.kind == OutcomeKind::forbidden || outcome.kind == OutcomeKind::not_sent ||
      outcome.kind == OutcomeKind::ambiguous) {
    // Not about this id: the same one is read on the next run.
    spdlog::warn("pull_lots: inventory {}: {}", inventory_id, outcome.detail);
    run.ok = false;
    run.back_off = backoff_.note_failure(outcome);
    co_return run;
  }
  backoff_.note_success();
  ++position_;
  if (const auto lots = lots_in(inventory_id, levels)) {
    const merchant::LotChanges changes = context_.merchant.replace_lots(inventory_id, *lots);
    failpoint("pull_lots.after_merchant_commit");
    context_.metrics.count_items(name(), "written", changes.written);
    context_.metrics.count_items(name(), "removed", changes.removed);
    run.settled += changes.written + changes.removed;
  } else {
    failed_in_cycle_ = true;
    run.ok = false;
  }
  if (position_ == cycle_.size() && !failed_in_cycle_) last_cycle_started_ = cycle_started_wall_;
  if (!spread_) {
    run.more = position_ < cycle_.size();
  } else {
    const auto next = position_ < cycle_.size() ? due(position_) : cycle_started_ + config_.interval;
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - std::chrono::steady_clock::now());
    run.back_off = std::max(std::chrono::milliseconds(1), wait);
  }
  co_return run;
}

// The watched inventory ids: those named, and those of the SKUs named that the SKU map resolves.
std::vector<std::int64_t> PullLotsJob::watched() {
  std::vector<std::int64_t> ids = context_.merchant.watched_inventory_ids();
  const merchant::WatchedSkus skus = context_.merchant.resolve_watched_skus();
  ids.insert(ids.end(), skus.inventory_ids.begin(), skus.inventory_ids.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<std::string> printable;
  for (const std::string& sku : skus.unresolved) printable.push_back(text::printable(sku));
  const std::string unresolved = fmt::format("{}", fmt::join(printable, ","));
  context_.metrics.set_unresolved_watched_skus(static_cast<int>(skus.unresolved.size()));
  if (!skus.unresolved.empty()) {
    context_.metrics.count_items(name(), "sku_unresolved", static_cast<double>(skus.unresolved.size()));
    spdlog::warn("pull_lots: {} watched SKU(s) not in the SKU map, no lots read for them (see the result table "
                 "watched_sku_sync): {}",
                 skus.unresolved.size(), unresolved);
  }
  if (context_.checkpoint.cursor(kUnresolvedWatchedSkus).value_or("") != unresolved) {
    context_.checkpoint.save_cursor(kUnresolvedWatchedSkus, unresolved);
  }
  return ids;
}

// The lots of an answer about `inventory_id`, or nothing when they cannot be known (kept as they were).
std::optional<std::vector<merchant::LotRecord>> PullLotsJob::lots_in(std::int64_t inventory_id,
                                                                     const api::Answer<api::LotLevels>& levels) {
  const api::Outcome& outcome = levels.outcome;
  if (outcome.status == 404) {
    spdlog::warn("pull_lots: inventory {} is not known to the provider; check {}", inventory_id,
                 merchant::kWatchedInventoryTable);
    return std::vector<merchant::LotRecord>{};  // it holds no lots
  }
  if (!outcome.ok()) {
    spdlog::warn("pull_lots: inventory {}: {}; its lots are kept as they were", inventory_id, outcome.detail);
    context_.metrics.count_items(name(), "refused");
    return std::nullopt;
  }
  if (!levels) {
    spdlog::warn("pull_lots: the lots of inventory {} cannot be read ({}); kept as they were", inventory_id,
                 levels.why());
    context_.metrics.count_items(name(), "unreadable");
    return std::nullopt;
  }
  return lots_of(*levels);
}

}  // namespace fulfillsync::daemon
