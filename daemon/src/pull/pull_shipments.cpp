#include "pull/pull_shipments.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "fulfillsync/daemon/job/failpoints.hpp"
#include "fulfillsync/daemon/mapping/pulled_mapping.hpp"
#include "job/concurrently.hpp"
#include "pull/order_page_writer.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

constexpr const char* kCursor = "pull_shipments";
// Timelines fetched at once.
constexpr std::size_t kTimelineConcurrency = 4;

}  // namespace

PullShipmentsJob::PullShipmentsJob(PullContext context, config::PullJobConfig config)
    : context_(context), provider_(context.client), config_(config), backoff_("pull_shipments", context.metrics) {}

asio::awaitable<JobRun> PullShipmentsJob::run() {
  try {
    co_return co_await walk();
  } catch (...) {
    window_failed_ = true;  // a store that cannot be written: the window is not committed
    throw;
  }
}

asio::awaitable<JobRun> PullShipmentsJob::walk() {
  JobRun run;
  if (backoff_.holds(run)) co_return run;
  const auto walk_started = std::chrono::system_clock::now();
  // The window starts `overlap` before the end of the last one (the provider's pages are not sorted
  // across boundaries, and its updates can land late), never before the starting point.
  const auto saved = context_.checkpoint.cursor(kCursor);
  const auto saved_at = saved ? timestamps::parse_iso8601(*saved) : std::nullopt;
  const timestamps::TimePoint checkpoint = saved_at.value_or(context_.starting_point);
  const timestamps::TimePoint window_start = std::max(context_.starting_point, checkpoint - config_.overlap);

  api::OrderPages pages = provider_.list_orders_changed(window_start, config_.page_size);
  timestamps::TimePoint latest = checkpoint;
  // Changes made while the window is walked may land on pages already read, so the next window must
  // begin before this one did, by the provider's clock: its Date at the first page (whole seconds,
  // and the page was read a moment before), or else the walk's own duration back from the latest change.
  std::optional<timestamps::TimePoint> began_at_provider;
  bool first_page = true;
  std::optional<api::Answer<api::OrderPage>> page = co_await pages.next();
  while (!context_.stopping && page) {
    if (!page->outcome.ok()) {
      spdlog::warn("pull_shipments: page {} of the orders changed since {}: {}; the window is read again later",
                   pages.page(), timestamps::format_iso8601_z(window_start), page->why());
      run.ok = false;
      run.back_off = backoff_.note_failure(page->outcome);
      window_failed_ = true;
      co_return run;
    }
    if (first_page) {
      first_page = false;
      if (const auto date = page->outcome.response.header("date")) {
        began_at_provider = timestamps::parse_http_date(*date);
      }
    }
    if (!page->ok()) {
      spdlog::warn("pull_shipments: page {} cannot be read ({}); the window is read again later", pages.page(),
                   page->why());
      context_.metrics.count_items(name(), "unreadable");
      run.ok = false;
      run.back_off = backoff_.note_failure(page->outcome);
      window_failed_ = true;
      co_return run;
    }
    // The next page is asked for before this one is written: the provider lists it while the
    // merchant database writes this one. A write that fails waits for it, and the walk ends.
    std::optional<api::Answer<api::OrderPage>> following;
    PageWritten written;
    co_await for_each_concurrently(2, 2, [&](std::size_t task) -> asio::awaitable<void> {
      if (task == 0) {
        if (!context_.stopping) following = co_await pages.next();
      } else {
        written = write_order_page(context_, **page);
      }
    });
    page = std::move(following);
    failpoint("pull_shipments.after_page_commit");
    context_.metrics.count_items(name(), "written", written.shipments);
    run.settled += written.shipments;
    if (written.latest_change) latest = std::max(latest, *written.latest_change);
    if (config_.timelines) co_await pull_timelines(written.shipment_ids);
  }
  if (context_.stopping) co_return run;  // an unfinished window is not saved
  // Nothing changed after the newest change already stored: the overlap's orders only, read again.
  run.quiet = saved && latest <= checkpoint;
  // The window holds every change the provider showed up to its clock at the first page, so the next
  // one begins `overlap` before that moment, not before the newest change seen: once changes stop,
  // that would read the last minute of them again on every window, a page per 250 of them, for ever.
  // Without the provider's clock, the walk's own duration back from the newest change.
  latest = began_at_provider ? *began_at_provider - 1s
                             : latest - std::chrono::duration_cast<timestamps::Clock::duration>(
                                            std::chrono::system_clock::now() - walk_started);
  backoff_.note_success();
  failpoint("pull_shipments.before_checkpoint");
  if ((latest > checkpoint || !saved) &&
      !context_.checkpoint.advance_cursor(kCursor, saved, timestamps::format_iso8601_z(latest))) {
    spdlog::info("pull_shipments: the window was moved back while it was read (resync); reading from there next");
  }
  window_failed_ = false;
  data_as_of_ = walk_started;
  co_return run;
}

// Timelines are an extra: one that cannot be read is logged and counted, and does not hold the window.
asio::awaitable<void> PullShipmentsJob::pull_timelines(
    const std::vector<std::pair<std::int64_t, std::int64_t>>& shipments) {
  co_await for_each_concurrently(shipments.size(), kTimelineConcurrency, [&](std::size_t i) -> asio::awaitable<void> {
    const auto [order_id, shipment_id] = shipments[i];
    const api::Answer<api::ShipmentTimeline> timeline = co_await provider_.shipment_timeline(order_id, shipment_id);
    if (!timeline.outcome.ok()) {
      context_.metrics.count_items("pull_shipments", "timeline_failed");
      spdlog::warn("pull_shipments: timeline of shipment {}: {}", shipment_id, timeline.why());
      co_return;
    }
    if (!timeline) {
      context_.metrics.count_items("pull_shipments", "timeline_failed");
      spdlog::warn("pull_shipments: timeline of shipment {} cannot be read ({})", shipment_id, timeline.why());
      co_return;
    }
    context_.merchant.write_timeline(shipment_id, timeline_of(*timeline));
    context_.metrics.count_items("pull_shipments", "timeline");
  });
}

}  // namespace fulfillsync::daemon
