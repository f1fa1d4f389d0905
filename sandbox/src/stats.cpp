#include "fulfillsync/sandbox/stats.hpp"

#include "fulfillsync/common/json_writer.hpp"

namespace fulfillsync::sandbox {

std::string Stats::to_json() const {
  json::JsonWriter w;
  w.begin_object().key("requests").begin_array();
  std::uint64_t total = 0;
  for (const auto& [route, by_status] : requests) {
    for (const auto& [status, count] : by_status) {
      w.begin_object().field("route", route).field("status", status).field("count", count).end_object();
      total += count;
    }
  }
  w.end_array().field("requests_total", total).key("creates").begin_object();
  for (const auto& [kind, count] : creates) w.field(kind, count);
  w.end_object().field("duplicates_refused", duplicates_refused).field("rate_limited", rate_limited)
      .field("tracking_upload_requests", tracking_upload_requests);
  w.key("faults_injected").begin_object();
  for (const auto& [kind, count] : faults) w.field(kind, count);
  w.end_object().end_object();
  return w.take();
}

std::string Stats::catalog_writes_json() const {
  json::JsonWriter w;
  w.begin_array();
  for (const CatalogWrite& write : catalog_writes) {
    w.begin_object().field("method", write.method).field("path", write.path).field("body", write.body)
        .field("status", write.status).end_object();
  }
  w.end_array();
  return w.take();
}

}  // namespace fulfillsync::sandbox
