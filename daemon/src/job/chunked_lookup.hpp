#pragma once
// What the provider has of many sends, asked a chunk of ids per request: how both ledgers settle
// their unclear sends (the outbound ledger's creates and cancels, the tracking marks), and how
// cancels are checked before they leave.
#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <string_view>
#include <type_traits>

#include <spdlog/spdlog.h>

#include "fulfillsync/api/answer.hpp"
#include "fulfillsync/daemon/job/failure_backoff.hpp"
#include "fulfillsync/daemon/job/job.hpp"

namespace fulfillsync::daemon {

// Ids per lookup of unclear sends: a URL of a few kilobytes with typical ids; far below the page
// limit (250).
inline constexpr std::size_t kUnclearLookupChunk = 40;

template <typename Id, typename Found>
struct ChunkedLookup {
  std::string_view job;   // for logs
  std::string_view what;  // what is looked up, for logs: "unclear sends"
  std::size_t chunk = kUnclearLookupChunk;
  // What the provider has of one chunk of ids.
  std::function<boost::asio::awaitable<api::Answer<Found>>(std::span<const Id> chunk)> ask;
  // Settles the chunk's ids (from `first` in the list looked up) by what was found, before the
  // next chunk is asked. False ends the walk: the rest are looked up on a later run.
  std::function<bool(std::size_t first, std::span<const Id> chunk, const Found& found)> settle;
};

// Looks `ids` up a chunk at a time until all are settled or the daemon stops. A lookup that fails
// ends the walk: it is logged, and `run` fails and backs off as `backoff` says. Returns whether
// every chunk asked was answered and settled.
template <typename Id, typename Found>
boost::asio::awaitable<bool> look_up_in_chunks(std::type_identity_t<std::span<const Id>> ids,
                                               const ChunkedLookup<Id, Found>& lookup, const bool& stopping,
                                               FailureBackoff& backoff, JobRun& run) {
  for (std::size_t first = 0; first < ids.size() && !stopping; first += lookup.chunk) {
    const std::span<const Id> chunk = ids.subspan(first, std::min(lookup.chunk, ids.size() - first));
    const api::Answer<Found> found = co_await lookup.ask(chunk);
    if (!found) {
      spdlog::warn("{}: looking up {} failed ({}); trying again later", lookup.job, lookup.what, found.why());
      run.ok = false;
      run.back_off = backoff.note_failure(found.outcome);
      co_return false;
    }
    backoff.note_success();
    if (!lookup.settle(first, chunk, *found)) co_return false;
  }
  co_return true;
}

}  // namespace fulfillsync::daemon
