#include "fulfillsync/daemon/metrics.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <CivetServer.h>
#include <civetweb.h>
#include <fmt/format.h>
#include <prometheus/exposer.h>

#include "fulfillsync/common/version.hpp"
#include "fulfillsync/daemon/process_metrics.hpp"

namespace fulfillsync::daemon {
namespace {

prometheus::Gauge& single_gauge(prometheus::Registry& registry, const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add({});
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// GET / answers with a page linking to /metrics, as Prometheus exporters do. The Exposer serves
// only the URIs of its collectables, but passes CivetWeb's callbacks on: begin_request sees every
// request first, and returning 0 leaves all but "/" to CivetWeb and the Exposer's /metrics handler.
int serve_landing_page(mg_connection* connection) {
  const mg_request_info* request = mg_get_request_info(connection);
  if (request == nullptr || request->local_uri == nullptr || std::string_view(request->local_uri) != "/") return 0;
  const std::string_view method = request->request_method;
  if (method != "GET" && method != "HEAD") return 0;
  static const std::string page = fmt::format(
      "<!DOCTYPE html>\n<html>\n<head><title>fulfillsyncd</title></head>\n<body>\n<h1>fulfillsyncd</h1>\n"
      "<p>Version {}</p>\n<p><a href=\"/metrics\">Metrics</a></p>\n</body>\n</html>\n",
      kVersion);
  mg_send_http_ok(connection, "text/html; charset=utf-8", static_cast<long long>(page.size()));
  if (method == "GET") mg_write(connection, page.data(), page.size());
  return 200;
}

// CivetWeb says only "null context" when it cannot listen: binding the address ourselves tells why
// ("address already in use", "cannot assign requested address", "permission denied").
std::optional<std::string> why_cannot_listen(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int error = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); error != 0) {
    return std::string(::gai_strerror(error));
  }
  std::optional<std::string> why;
  const int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
  if (fd < 0) {
    why = std::strerror(errno);
  } else {
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);  // as CivetWeb does
    if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0) why = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (why && !why->empty()) (*why)[0] = static_cast<char>(std::tolower(static_cast<unsigned char>((*why)[0])));
  return why;
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

std::uint16_t Metrics::serve(const config::MetricsConfig& config) {
  const std::string host = config.host.find(':') != std::string::npos ? "[" + config.host + "]" : config.host;
  const std::string address = fmt::format("{}:{}", host, config.port);
  try {
    CivetCallbacks callbacks;  // CivetWeb copies them
    callbacks.begin_request = serve_landing_page;
    exposer_ = std::make_unique<prometheus::Exposer>(address, 1, &callbacks);
  } catch (const std::exception& e) {
    if (const auto why = why_cannot_listen(config.host, config.port)) {
      throw std::runtime_error(fmt::format("metrics.listen {}: {}", address, *why));
    }
    throw std::runtime_error(fmt::format("cannot serve metrics on {}: {}", address, e.what()));
  }
  exposer_->RegisterCollectable(registry_);
  exposer_->RegisterCollectable(process_);
  const auto ports = exposer_->GetListeningPorts();
  if (ports.empty()) throw std::runtime_error(fmt::format("cannot serve metrics on {}", address));
  return static_cast<std::uint16_t>(ports.front());
}

void Metrics::record_config_load(bool success) {
  reload_successful_.Set(success ? 1 : 0);
  if (success) reload_success_timestamp_.Set(now_seconds());
}

}  // namespace fulfillsync::daemon
