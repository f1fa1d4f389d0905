#pragma once
// The daemon's HTTP endpoint, served on its own event loop with Beast: GET / (a page linking to
// /metrics), /metrics, /healthz and /readyz. Each connection is a coroutine with a bounded buffer and
// its own deadlines, so no client can hold a worker that others need: there are none to hold.
// Optional TLS (reloaded on SIGHUP) and basic auth with bcrypt hashes, as the exporters' web config.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <prometheus/registry.h>

#include "fulfillsync/config/config.hpp"
#include "fulfillsync/daemon/service/http_request.hpp"

namespace fulfillsync::daemon {

// What /healthz or /readyz reports: fine, or the reasons it is not.
struct Probe {
  std::vector<std::string> problems;
  bool ok() const { return problems.empty(); }
};

using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

// Why the configured certificate, key or client CA cannot be used (for check-config); nullopt when they load.
std::optional<std::string> tls_files_problem(const config::MetricsTlsConfig& tls);

class HttpEndpoint {
 public:
  struct Handlers {
    std::function<std::string()> metrics;  // the exposition text
    std::function<Probe()> health;
    std::function<Probe()> readiness;
  };

  // Registers the endpoint's own metrics in `registry`. Nothing is served until start().
  HttpEndpoint(boost::asio::any_io_executor executor, config::MetricsConfig config, Handlers handlers,
               std::shared_ptr<prometheus::Registry> registry);
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // Loads the TLS files, binds and starts accepting; returns the bound port. Throws std::runtime_error
  // naming the setting and the reason ("metrics.listen 127.0.0.1:9464: address already in use").
  std::uint16_t start();
  // Reads the TLS certificate and key again (SIGHUP); open connections keep the ones they have. On a
  // failure it throws std::runtime_error and the files read before stay in use.
  void reload_tls();
  std::size_t open_connections() const;

  // The answer to an authenticated request, whatever the transport (HEAD gets GET's header).
  HttpResponse answer(const HttpRequest& request) const;

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;  // shared with the connections' coroutines
};

}  // namespace fulfillsync::daemon
