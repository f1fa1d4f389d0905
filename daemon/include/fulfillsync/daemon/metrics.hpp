#pragma once
// The daemon's Prometheus registry and its HTTP endpoint (GET /metrics, and GET / a page linking to it).
#include <cstdint>
#include <memory>
#include <optional>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "fulfillsync/config/config.hpp"

namespace prometheus {
class Exposer;
}

namespace fulfillsync::daemon {

class ProcessMetrics;

class Metrics {
 public:
  // Creates the registry with the daemon-wide metrics. Nothing is served until serve().
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Starts serving GET /metrics (and the landing page at /) on the configured address; throws std::runtime_error when it
  // cannot bind. Returns the bound port (the real one when the configuration said 0).
  std::uint16_t serve(const config::MetricsConfig& config);

  prometheus::Registry& registry() { return *registry_; }

  // fulfillsync_config_last_reload_successful and ..._success_timestamp_seconds, as Prometheus'
  // own server names them.
  void record_config_load(bool success);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<ProcessMetrics> process_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  prometheus::Gauge& reload_successful_;
  prometheus::Gauge& reload_success_timestamp_;
};

}  // namespace fulfillsync::daemon
