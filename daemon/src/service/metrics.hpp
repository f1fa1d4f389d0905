#pragma once
// The daemon's Prometheus registry and its HTTP endpoint (GET /metrics, /healthz, /readyz, and GET / a page
// linking to them; see http_endpoint.hpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "fulfillsync/config/config.hpp"
#include "service/http_endpoint.hpp"

namespace fulfillsync::daemon {

class ProcessMetrics;

class Metrics {
 public:
  // Creates the registry with the daemon-wide metrics. Nothing is served until serve().
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Starts serving the endpoint on `executor` at the configured address; throws std::runtime_error when it cannot
  // (see HttpEndpoint::start). Returns the bound port (the real one when the configuration said 0).
  std::uint16_t serve(const config::MetricsConfig& config, boost::asio::any_io_executor executor,
                      std::function<Probe()> health, std::function<Probe()> readiness);
  // Reads the endpoint's TLS certificate and key again; throws std::runtime_error when they cannot be used.
  void reload_tls();

  // Every metric in the text exposition format, as GET /metrics answers.
  std::string exposition() const;

  prometheus::Registry& registry() { return *registry_; }

  // fulfillsync_config_last_reload_successful and ..._success_timestamp_seconds, as Prometheus'
  // own server names them.
  void record_config_load(bool success);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<ProcessMetrics> process_;
  std::unique_ptr<HttpEndpoint> endpoint_;
  prometheus::Gauge& reload_successful_;
  prometheus::Gauge& reload_success_timestamp_;
};

}  // namespace fulfillsync::daemon
