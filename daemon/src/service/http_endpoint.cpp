#include "service/http_endpoint.hpp"

#include <crypt.h>
#include <openssl/ssl.h>
#include <sys/resource.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <mutex>
#include <stdexcept>
#include <unordered_set>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/format.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/common/asio.hpp"
#include "fulfillsync/common/json_writer.hpp"
#include "fulfillsync/common/version.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

std::string gzip(std::string_view text) {
  z_stream stream{};
  // 15 + 16: the largest window, with a gzip header and trailer.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("zlib: deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (result != Z_STREAM_END) throw std::runtime_error("zlib: deflate did not finish");
  return out;
}

bool wants_json(const HttpRequest& request) {
  const std::string_view target = sv(request.target());
  const auto query = target.find('?');
  if (query != std::string_view::npos && target.substr(query + 1).find("format=json") != std::string_view::npos) {
    return true;
  }
  return sv(request[http::field::accept]).find("application/json") != std::string_view::npos;
}

HttpResponse text_response(const HttpRequest& request, http::status status, std::string body,
                           std::string_view content_type = "text/plain; charset=utf-8") {
  HttpResponse response{status, request.version()};
  response.set(http::field::server, "fulfillsyncd");
  response.set(http::field::content_type, beast::string_view(content_type.data(), content_type.size()));
  response.body() = std::move(body);
  return response;
}

HttpResponse probe_response(const HttpRequest& request, const Probe& probe) {
  const http::status status = probe.ok() ? http::status::ok : http::status::service_unavailable;
  if (wants_json(request)) {
    json::JsonWriter writer;
    writer.begin_object().field("status", probe.ok() ? "ok" : "unavailable").key("problems").begin_array();
    for (const auto& problem : probe.problems) writer.value(problem);
    writer.end_array().end_object();
    std::string body = writer.take();
    body += '\n';
    return text_response(request, status, std::move(body), "application/json");
  }
  std::string body = probe.ok() ? "ok\n" : "";
  for (const auto& problem : probe.problems) body += problem + '\n';
  return text_response(request, status, std::move(body));
}

std::string lowercase_first(std::string text) {
  if (!text.empty()) text.front() = static_cast<char>(std::tolower(static_cast<unsigned char>(text.front())));
  return text;
}

// Holding many idle connections needs descriptors; the soft limit (1024 by default) is raised to the
// hard one, which the daemon may do since it never uses select().
void raise_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// The server's TLS context from the configured files; throws std::runtime_error naming them.
std::shared_ptr<asio::ssl::context> make_tls_context(const config::MetricsTlsConfig& tls) {
  auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  try {
    SSL_CTX_set_min_proto_version(context->native_handle(),
                                  tls.min_version == config::MetricsTlsConfig::MinVersion::tls13 ? TLS1_3_VERSION
                                                                                                : TLS1_2_VERSION);
    context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::single_dh_use);
    context->use_certificate_chain_file(tls.cert_file.string());
    context->use_private_key_file(tls.key_file.string(), asio::ssl::context::pem);
    if (!tls.client_ca_file.empty()) {
      context->load_verify_file(tls.client_ca_file.string());
      context->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
    }
  } catch (const boost::system::system_error& e) {
    throw std::runtime_error(fmt::format("metrics.tls_server_config ({}, {}{}): {}", tls.cert_file.string(),
                                         tls.key_file.string(),
                                         tls.client_ca_file.empty() ? "" : ", " + tls.client_ca_file.string(),
                                         e.code().message()));
  }
  return context;
}

}  // namespace

std::optional<std::string> tls_files_problem(const config::MetricsTlsConfig& tls) {
  try {
    make_tls_context(tls);
    return std::nullopt;
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

class HttpEndpoint::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(asio::any_io_executor executor, config::MetricsConfig config, Handlers handlers,
       std::shared_ptr<prometheus::Registry> registry)
      : executor_(std::move(executor)),
        config_(std::move(config)),
        handlers_(std::move(handlers)),
        registry_(std::move(registry)),
        acceptor_(executor_),
        connections_(prometheus::BuildGauge()
                         .Name("fulfillsync_http_connections")
                         .Help("Connections open to the metrics and health endpoint.")
                         .Register(*registry_)
                         .Add({})),
        requests_(prometheus::BuildCounter()
                      .Name("fulfillsync_http_requests_total")
                      .Help("Requests answered by the metrics and health endpoint, by path and status code.")
                      .Register(*registry_)),
        dropped_(prometheus::BuildCounter()
                     .Name("fulfillsync_http_connections_dropped_total")
                     .Help("Connections closed without an answer: header_timeout (the header did not come within "
                           "metrics.header_read_timeout), tls (the handshake failed), or error.")
                     .Register(*registry_)) {}

  std::uint16_t start() {
    const std::string where = fmt::format("metrics.listen {}:{}", config_.host, config_.port);
    if (config_.tls) tls_ = make_tls_context(*config_.tls);
    raise_descriptor_limit();
    beast::error_code ec;
    const auto address = asio::ip::make_address(config_.host, ec);
    std::vector<tcp::endpoint> endpoints;
    if (!ec) {
      endpoints.emplace_back(address, config_.port);
    } else {
      tcp::resolver resolver(executor_);
      for (const auto& entry : resolver.resolve(config_.host, std::to_string(config_.port), ec)) {
        endpoints.push_back(entry.endpoint());
      }
      if (ec || endpoints.empty()) throw std::runtime_error(fmt::format("{}: {}", where, lowercase_first(ec.message())));
    }
    const tcp::endpoint endpoint = endpoints.front();
    if (acceptor_.open(endpoint.protocol(), ec); !ec) {
      acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
      if (acceptor_.bind(endpoint, ec); !ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) throw std::runtime_error(fmt::format("{}: {}", where, lowercase_first(ec.message())));
    asio::co_spawn(executor_, accept(shared_from_this()), asio::detached);
    return acceptor_.local_endpoint().port();
  }

  void reload_tls() {
    if (!config_.tls) return;
    auto fresh = make_tls_context(*config_.tls);
    const std::scoped_lock lock(tls_mutex_);
    tls_ = std::move(fresh);
  }

  std::size_t open_connections() const { return open_; }

  void stop() {
    beast::error_code ignored;
    acceptor_.close(ignored);
  }

  HttpResponse answer(const HttpRequest& request) const {
    const std::string_view target = sv(request.target());
    const std::string_view path = target.substr(0, target.find('?'));
    if (path != "/" && path != "/metrics" && path != "/healthz" && path != "/readyz") {
      return text_response(request, http::status::not_found, "not found: try /metrics, /healthz or /readyz\n");
    }
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      HttpResponse response = text_response(request, http::status::method_not_allowed, "only GET and HEAD\n");
      response.set(http::field::allow, "GET, HEAD");
      return response;
    }
    if (path == "/healthz") return probe_response(request, handlers_.health());
    if (path == "/readyz") return probe_response(request, handlers_.readiness());
    if (path == "/metrics") {
      HttpResponse response = text_response(request, http::status::ok, handlers_.metrics(),
                                            "text/plain; version=0.0.4; charset=utf-8");
      if (accepts_gzip(sv(request[http::field::accept_encoding]))) {
        response.body() = gzip(response.body());
        response.set(http::field::content_encoding, "gzip");
      }
      response.set(http::field::vary, "Accept-Encoding");
      return response;
    }
    static const std::string page = fmt::format(
        "<!DOCTYPE html>\n<html>\n<head><title>fulfillsyncd</title></head>\n<body>\n<h1>fulfillsyncd</h1>\n"
        "<p>Version {}</p>\n<p><a href=\"/metrics\">Metrics</a></p>\n</body>\n</html>\n",
        kVersion);
    return text_response(request, http::status::ok, page, "text/html; charset=utf-8");
  }

 private:
  using TlsStream = beast::ssl_stream<beast::tcp_stream>;

  static asio::awaitable<void> accept(std::shared_ptr<Impl> self) {
    asio::steady_timer pause(self->executor_);
    while (self->acceptor_.is_open()) {
      beast::error_code ec;
      tcp::socket socket = co_await self->acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (ec == asio::error::operation_aborted) co_return;
      if (ec) {
        // Out of descriptors, most likely: the connections held so far close by their deadlines.
        spdlog::warn("metrics endpoint: cannot accept a connection: {}", ec.message());
        pause.expires_after(100ms);
        co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        continue;
      }
      asio::co_spawn(self->executor_, connection(self, std::move(socket)), asio::detached);
    }
  }

  static asio::awaitable<void> connection(std::shared_ptr<Impl> self, tcp::socket socket) {
    // Counted while the coroutine lives, also when the loop is torn down with it suspended.
    struct Open {
      Impl& impl;
      explicit Open(Impl& i) : impl(i) {
        ++impl.open_;
        impl.connections_.Increment();
      }
      ~Open() {
        --impl.open_;
        impl.connections_.Decrement();
      }
    } open(*self);
    beast::tcp_stream tcp(std::move(socket));
    // From the connection's start to the end of the first header, the TLS handshake included.
    tcp.expires_after(self->config_.header_read_timeout);
    std::shared_ptr<asio::ssl::context> tls;
    {
      const std::scoped_lock lock(self->tls_mutex_);
      tls = self->tls_;
    }
    if (!tls) {
      co_await self->exchange(tcp, tcp);
      co_return;
    }
    TlsStream stream(std::move(tcp), *tls);
    beast::error_code ec;
    co_await stream.async_handshake(asio::ssl::stream_base::server, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      self->drop(ec == beast::error::timeout ? "header_timeout" : "tls");
      co_return;
    }
    co_await self->exchange(stream, beast::get_lowest_layer(stream));
    beast::get_lowest_layer(stream).expires_after(1s);
    co_await stream.async_shutdown(asio::redirect_error(asio::use_awaitable, ec));
  }

  void drop(const std::string& reason) { dropped_.Add({{"reason", reason}}).Increment(); }

  // Requests and answers on one connection until the client or a deadline ends it.
  template <typename Stream>
  asio::awaitable<void> exchange(Stream& stream, beast::tcp_stream& tcp) {
    beast::flat_buffer buffer(kMaxRequestHeader);
    for (bool first = true;; first = false) {
      beast::error_code ec;
      if (!first && buffer.size() == 0) {
        // Keep-alive: the next request may take idle_timeout to begin, then header_read_timeout to arrive.
        tcp.expires_after(config_.idle_timeout);
        const std::size_t n = co_await stream.async_read_some(buffer.prepare(kMaxRequestHeader),
                                                              asio::redirect_error(asio::use_awaitable, ec));
        if (ec) co_return;  // closed, or idle for too long: nothing was asked
        buffer.commit(n);
        tcp.expires_after(config_.header_read_timeout);
      } else if (!first) {
        tcp.expires_after(config_.header_read_timeout);
      }
      HttpRequestParser parser;
      limit_request_parser(parser);
      co_await http::async_read_header(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
      if (ec == beast::error::timeout) {
        drop("header_timeout");
        co_return;
      }
      if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset) {
        co_return;
      }
      const HttpRequest& request = parser.get();
      HttpResponse response;
      bool keep_alive = false;
      if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
        response = text_response(request, http::status::request_header_fields_too_large, "header too large\n");
      } else if (ec) {
        drop("error");
        co_return;
      } else if (parser.content_length().value_or(0) > 0 || parser.chunked()) {
        response = text_response(request, http::status::payload_too_large, "request bodies are not accepted\n");
      } else if (auto refusal = co_await authenticate(request)) {
        response = std::move(*refusal);
        keep_alive = request.keep_alive();
      } else {
        try {
          response = answer(request);
        } catch (const std::exception& e) {
          spdlog::error("metrics endpoint: {} {}: {}", std::string(request.method_string()),
                        std::string(request.target()), e.what());
          response = text_response(request, http::status::internal_server_error, "internal error\n");
        }
        keep_alive = request.keep_alive();
      }
      const std::string_view path = sv(request.target()).substr(0, sv(request.target()).find('?'));
      const bool known = path == "/" || path == "/metrics" || path == "/healthz" || path == "/readyz";
      requests_.Add({{"path", known ? std::string(path) : "other"}, {"code", std::to_string(response.result_int())}})
          .Increment();
      response.keep_alive(keep_alive);
      // Writing the answer gets the same limit as reading the question: a client that does not read
      // cannot keep a rendered page in memory for long.
      tcp.expires_after(config_.header_read_timeout);
      if (request.method() == http::verb::head) {
        http::response<http::empty_body> head{response.base()};
        head.content_length(response.body().size());
        http::response_serializer<http::empty_body> serializer(head);
        serializer.split(true);
        co_await http::async_write_header(stream, serializer, asio::redirect_error(asio::use_awaitable, ec));
      } else {
        response.prepare_payload();
        co_await http::async_write(stream, response, asio::redirect_error(asio::use_awaitable, ec));
      }
      if (ec || !keep_alive) co_return;
    }
  }

  // Nullopt when the request may be answered; else the answer that refuses it.
  asio::awaitable<std::optional<HttpResponse>> authenticate(const HttpRequest& request) {
    if (config_.basic_auth_users.empty()) co_return std::nullopt;
    const auto credentials = parse_basic_authorization(sv(request[http::field::authorization]));
    if (credentials) {
      const std::string key = credentials->user + ':' + credentials->password;
      if (verified_.contains(key)) co_return std::nullopt;
      const auto user = config_.basic_auth_users.find(credentials->user);
      // bcrypt takes tens of milliseconds by design: it runs beside the loop, not on it. An unknown
      // user is checked against a hash too, so that timing does not tell which users exist.
      const std::string hash = user != config_.basic_auth_users.end() ? user->second
                                                                       : config_.basic_auth_users.begin()->second;
      const std::string password = credentials->password;
      const auto check = [hash, password]() -> asio::awaitable<bool> { co_return bcrypt_matches(password, hash); };
      const bool matches = co_await asio::co_spawn(hasher_, check, asio::use_awaitable);
      if (matches && user != config_.basic_auth_users.end()) {
        if (verified_.size() >= 64) verified_.clear();  // bounded: a few scrapers use it
        verified_.insert(key);
        co_return std::nullopt;
      }
    }
    HttpResponse refusal = text_response(request, http::status::unauthorized, "unauthorized\n");
    refusal.set(http::field::www_authenticate, "Basic realm=\"fulfillsyncd\", charset=\"UTF-8\"");
    co_return refusal;
  }

  static bool bcrypt_matches(const std::string& password, const std::string& hash) {
    auto data = std::make_unique<crypt_data>();
    const char* result = crypt_r(password.c_str(), hash.c_str(), data.get());
    if (result == nullptr || result[0] == '*') return false;
    const std::string_view computed(result);
    if (computed.size() != hash.size()) return false;
    unsigned char difference = 0;
    for (std::size_t i = 0; i < hash.size(); ++i) {
      difference |= static_cast<unsigned char>(computed[i] ^ hash[i]);
    }
    return difference == 0;
  }

  asio::any_io_executor executor_;
  config::MetricsConfig config_;
  Handlers handlers_;
  std::shared_ptr<prometheus::Registry> registry_;
  tcp::acceptor acceptor_;
  prometheus::Gauge& connections_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Counter>& dropped_;
  std::size_t open_ = 0;
  std::mutex tls_mutex_;
  std::shared_ptr<asio::ssl::context> tls_;
  asio::thread_pool hasher_{1};
  std::unordered_set<std::string> verified_;  // user:password pairs that matched, so bcrypt runs once
};

HttpEndpoint::HttpEndpoint(asio::any_io_executor executor, config::MetricsConfig config, Handlers handlers,
                           std::shared_ptr<prometheus::Registry> registry)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(config), std::move(handlers),
                                   std::move(registry))) {}

HttpEndpoint::~HttpEndpoint() { impl_->stop(); }

std::uint16_t HttpEndpoint::start() { return impl_->start(); }
void HttpEndpoint::reload_tls() { impl_->reload_tls(); }
std::size_t HttpEndpoint::open_connections() const { return impl_->open_connections(); }
HttpResponse HttpEndpoint::answer(const HttpRequest& request) const { return impl_->answer(request); }

}  // namespace fulfillsync::daemon
