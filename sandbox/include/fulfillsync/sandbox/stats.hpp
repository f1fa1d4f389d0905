#pragma once
// Counts for GET /_sandbox/stats.
#include <cstdint>
#include <map>
#include <string>

namespace fulfillsync::sandbox {

struct Stats {
  std::map<std::string, std::map<int, std::uint64_t>> requests;  // "POST /order" -> status -> count
  std::map<std::string, std::uint64_t> creates;                  // "orders", "returns", ...
  std::uint64_t duplicates_refused = 0;
  std::map<std::string, std::uint64_t> faults;                   // "429", "drop_before", ...
  std::uint64_t rate_limited = 0;
  std::uint64_t tracking_upload_requests = 0;                    // batchUpdateTrackingUpload executed (200)

  void clear() { *this = Stats{}; }
  std::string to_json() const;
};

}  // namespace fulfillsync::sandbox
