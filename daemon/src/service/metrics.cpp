#include "service/metrics.hpp"

#include <chrono>

#include <prometheus/text_serializer.h>

#include "fulfillsync/common/version.hpp"
#include "service/process_metrics.hpp"

namespace fulfillsync::daemon {
namespace {

prometheus::Gauge& single_gauge(prometheus::Registry& registry, const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add({});
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      process_(std::make_shared<ProcessMetrics>()),
      reload_successful_(single_gauge(*registry_, "fulfillsync_config_last_reload_successful",
                                      "Whether the last configuration load or reload succeeded (1) or failed (0).")),
      reload_success_timestamp_(single_gauge(*registry_, "fulfillsync_config_last_reload_success_timestamp_seconds",
                                             "When the configuration was last loaded successfully, in Unix time.")) {
  prometheus::BuildGauge()
      .Name("fulfillsync_build_info")
      .Help("Always 1; the labels describe the running build.")
      .Register(*registry_)
      .Add({{"version", kVersion}})
      .Set(1);
}

Metrics::~Metrics() = default;

std::uint16_t Metrics::serve(const config::MetricsConfig& config, boost::asio::any_io_executor executor,
                             std::function<Probe()> health, std::function<Probe()> readiness) {
  endpoint_ = std::make_unique<HttpEndpoint>(
      std::move(executor), config,
      HttpEndpoint::Handlers{[this] { return exposition(); }, std::move(health), std::move(readiness)}, registry_);
  return endpoint_->start();
}

void Metrics::reload_tls() {
  if (endpoint_) endpoint_->reload_tls();
}

std::string Metrics::exposition() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  std::vector<prometheus::MetricFamily> process = process_->Collect();
  families.insert(families.end(), std::make_move_iterator(process.begin()), std::make_move_iterator(process.end()));
  return prometheus::TextSerializer().Serialize(families);
}

void Metrics::record_config_load(bool success) {
  reload_successful_.Set(success ? 1 : 0);
  if (success) reload_success_timestamp_.Set(now_seconds());
}

}  // namespace fulfillsync::daemon
