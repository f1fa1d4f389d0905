#pragma once
// The API client's metrics. Labels are bounded: route templates, methods, status classes and
// outcome kinds; never an id.
#include <chrono>
#include <string>
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "fulfillsync/api/metric_children.hpp"
#include "fulfillsync/api/outcome.hpp"

namespace fulfillsync::api {

class ApiMetrics {
 public:
  explicit ApiMetrics(prometheus::Registry& registry);

  // One exchange on the wire (every attempt counts).
  void observe_exchange(std::string_view route, std::string_view method, const Outcome& outcome,
                        std::chrono::steady_clock::duration latency);
  // The final outcome of one call, after retries.
  void observe_call(std::string_view route, const Outcome& outcome);
  void count_retry(std::string_view route);
  void count_throttle();
  void count_token_refresh(bool success);
  void set_budget(int remaining, int limit);

 private:
  MetricChildren<prometheus::Counter, 3> requests_;
  MetricChildren<prometheus::Histogram, 1> latency_;
  MetricChildren<prometheus::Counter, 2> calls_;
  MetricChildren<prometheus::Counter, 1> retries_;
  prometheus::Counter& throttled_;
  prometheus::Family<prometheus::Counter>& refreshes_;
  prometheus::Gauge& budget_remaining_;
  prometheus::Gauge& budget_limit_;
};

}  // namespace fulfillsync::api
