#include "pull/pull_stock.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "fulfillsync/common/invariant.hpp"
#include "fulfillsync/common/printable.hpp"
#include "fulfillsync/daemon/job/failpoints.hpp"
#include "fulfillsync/daemon/mapping/pulled_mapping.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;

namespace {

constexpr const char* kCursor = "pull_stock";

}  // namespace

PullStockJob::PullStockJob(PullContext context, config::StockConfig config, bool repeat)
    : context_(context),
      provider_(context.client),
      config_(config),
      repeat_(repeat),
      backoff_("pull_stock", context.metrics) {
  context.metrics.set_pull_interval(name(), config.interval);
}

int PullStockJob::backlog() {
  if (!repeat_) return passed_ ? 0 : 1;
  return failed_ ? 1 : 0;
}

// Saved as `<when the pass started> <next page's link>`, or the time alone once the pass is done.
std::optional<PullStockJob::Pass> PullStockJob::saved_pass() {
  const auto saved = context_.checkpoint.cursor(kCursor);
  if (!saved) return std::nullopt;
  const auto space = saved->find(' ');
  const auto started = timestamps::parse_iso8601(saved->substr(0, space));
  if (!started) {
    spdlog::warn("pull_stock: the saved position '{}' does not read; a new pass starts", text::printable(*saved));
    return std::nullopt;
  }
  Pass pass{.started = *started};
  if (space == std::string::npos) {
    pass.done = true;
  } else {
    pass.next_link = saved->substr(space + 1);
  }
  return pass;
}

void PullStockJob::save(const Pass& pass) {
  const std::string started = timestamps::format_iso8601_z(pass.started);
  context_.checkpoint.save_cursor(kCursor, pass.done ? started : started + " " + pass.next_link);
}

asio::awaitable<JobRun> PullStockJob::run() {
  JobRun run;
  if (backoff_.holds(run)) co_return run;
  if (!repeat_ && passed_) co_return run;  // `once`: one pass
  const auto now = timestamps::Clock::now();
  std::optional<Pass> pass = saved_pass();
  if (!pass || pass->done) {
    // Between passes: the next starts an interval after the last began (`once` does not wait).
    if (pass && repeat_ && now < pass->started + config_.interval) {
      run.back_off = std::chrono::duration_cast<std::chrono::milliseconds>(pass->started + config_.interval - now);
      co_return run;
    }
    pass = Pass{.started = now};
  }
  co_return co_await read_page(std::move(*pass));
}

asio::awaitable<JobRun> PullStockJob::read_page(Pass pass) {
  JobRun run;
  api::ProductPages pages = provider_.list_products(config_.page_size, pass.next_link);
  // A new walk's first call always asks.
  const std::optional<api::Answer<api::ProductList>> page = co_await pages.next();
  FULFILLSYNC_INVARIANT(page.has_value(), "a walk's first page is always read");
  if (!*page) {
    // Failed or unreadable: the same page is read on a later run, the pass goes on from there.
    if (page->outcome.ok()) context_.metrics.count_items(name(), "unreadable");
    spdlog::warn("pull_stock: the product list{}: {}; read again later",
                 pass.next_link.empty() ? "" : fmt::format(" at {}", text::printable(pass.next_link)), page->why());
    run.ok = false;
    run.back_off = backoff_.note_failure(page->outcome);
    failed_ = true;
    co_return run;
  }
  backoff_.note_success();
  failed_ = false;
  int without_sku = 0;
  const auto records = variant_stock_of(**page, without_sku);
  // Never before the pass began, even if the clock stepped back since: a whole pass removes what it
  // did not write at or after its start.
  const auto read_at = std::max(timestamps::Clock::now(), pass.started);
  const int written = context_.merchant.write_variant_stock(records, read_at);
  failpoint("pull_stock.after_page_commit");
  context_.metrics.count_items(name(), "written", written);
  if (without_sku > 0) context_.metrics.count_items(name(), "without_sku", without_sku);
  run.settled += written;
  pass.next_link = pages.next_link();
  if (!pass.next_link.empty()) {
    save(pass);
    run.more = true;  // the rest of the pass, at pull priority in the shared budget
    co_return run;
  }
  // The whole list is read: SKUs it no longer holds go.
  const int removed = context_.merchant.remove_variants_read_before(pass.started);
  context_.metrics.count_items(name(), "removed", removed);
  run.settled += removed;
  failpoint("pull_stock.before_checkpoint");
  pass.done = true;
  save(pass);
  passed_ = true;
  data_as_of_ = pass.started;
  if (repeat_) {
    const auto wait = pass.started + config_.interval - timestamps::Clock::now();
    run.back_off = std::max(std::chrono::milliseconds(1), std::chrono::duration_cast<std::chrono::milliseconds>(wait));
  }
  co_return run;
}

}  // namespace fulfillsync::daemon
