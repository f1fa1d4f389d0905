#pragma once
// The standard process_* metrics (prometheus-cpp 1.0 exports none), read from /proc at scrape time.
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

namespace fulfillsync::daemon {

class ProcessMetrics final : public prometheus::Collectable {
 public:
  ProcessMetrics();
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  double start_time_seconds_;
};

}  // namespace fulfillsync::daemon
