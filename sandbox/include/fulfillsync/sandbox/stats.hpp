#pragma once
// Counts for GET /_sandbox/stats.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fulfillsync::sandbox {

// One request that writes the catalog (POST or PATCH under /product), as it reached an operation:
// what GET /_sandbox/catalog/writes lists, so that a test can see what a client sent.
struct CatalogWrite {
  std::string method;
  std::string path;  // after the version: /product/12/variants
  std::string body;
  int status = 0;
};

struct Stats {
  std::map<std::string, std::map<int, std::uint64_t>> requests;  // "POST /order" -> status -> count
  std::map<std::string, std::uint64_t> creates;                  // "orders", "returns", ...
  std::uint64_t duplicates_refused = 0;
  std::map<std::string, std::uint64_t> faults;                   // "429", "drop_before", ...
  std::uint64_t rate_limited = 0;
  std::uint64_t tracking_upload_requests = 0;                    // batchUpdateTrackingUpload executed (200)
  std::vector<CatalogWrite> catalog_writes;                      // the latest kMaxCatalogWrites
  static constexpr std::size_t kMaxCatalogWrites = 100'000;

  void clear() { *this = Stats{}; }
  std::string to_json() const;
  std::string catalog_writes_json() const;  // a JSON array of {method, path, body, status}
};

}  // namespace fulfillsync::sandbox
