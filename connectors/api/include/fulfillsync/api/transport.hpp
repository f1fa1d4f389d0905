#pragma once
// HTTP/1.1 over TCP or TLS to the provider, with a keep-alive connection pool. It moves bytes and
// reports precisely how far a request got; what an answer means is outcome.hpp's business.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fulfillsync/common/asio.hpp"

namespace fulfillsync::api {

// The parts of the configured base URL.
struct BaseUrl {
  bool tls = true;
  std::string host;
  std::uint16_t port = 443;
  std::string path_prefix;  // "" or "/something", never ending in '/'
};

// Parses "https://host[:port][/prefix]" or "http://...". Nothing when it is not such a URL.
std::optional<BaseUrl> parse_base_url(std::string_view url);

struct TransportOptions {
  BaseUrl base{};
  std::optional<std::filesystem::path> ca_file{};  // the system store when unset
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds request_timeout{30'000};
  std::size_t pool_size = 4;
  std::size_t max_response_bytes = 64 * 1024 * 1024;
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, e.g. "/2026-07/order?Page=2"
  std::vector<std::pair<std::string, std::string>> headers{};
  std::string body{};
  // Whether sending it twice has the effect of sending it once (GET, cancel, flag updates). Only
  // idempotent requests are resent after a stale keep-alive connection drops them.
  bool idempotent = false;
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body{};

  // The header's value, or nothing.
  std::optional<std::string_view> header(std::string_view lower_case_name) const;
};

// How far a failed exchange got. `not_sent`: the provider cannot have acted on it (no connection,
// TLS refused, the request not fully written). `sent`: it may have (no complete answer after the
// whole request left).
struct TransportError {
  enum class Stage { not_sent, sent };
  Stage stage;
  std::string what;  // for logs: "connect 10.0.0.1:443: connection refused"
  // The provider's TLS certificate failed verification (not_sent). Trying again does not mend it:
  // api.ca_file or api.base_url must change, so `what` says how.
  bool certificate_refused = false;
};

using TransportResult = std::variant<HttpResponse, TransportError>;

class Transport {
 public:
  // Throws std::runtime_error when the TLS set-up (e.g. ca_file) is unusable.
  Transport(boost::asio::any_io_executor executor, TransportOptions options);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  boost::asio::awaitable<TransportResult> send(HttpRequest request);

  // Closes idle connections (at shutdown).
  void close_idle();

  // Why the provider's certificate was refused at the last TLS handshake; nothing once a handshake
  // succeeds (or before any).
  const std::optional<std::string>& refused_certificate() const { return refused_certificate_; }

  const TransportOptions& options() const { return options_; }

 private:
  class Connection;
  boost::asio::awaitable<std::unique_ptr<Connection>> checkout(TransportError& failure);
  void checkin(std::unique_ptr<Connection> connection);

  boost::asio::any_io_executor executor_;
  TransportOptions options_;
  struct TlsContext;
  std::unique_ptr<TlsContext> tls_;
  std::vector<std::unique_ptr<Connection>> idle_;
  std::size_t open_ = 0;  // connections checked out or idle
  std::unique_ptr<boost::asio::steady_timer> pool_freed_;  // woken when a connection is checked in
  std::optional<std::string> refused_certificate_;
};

}  // namespace fulfillsync::api
