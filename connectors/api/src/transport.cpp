#include "fulfillsync/api/transport.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

namespace fulfillsync::api {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

// A keep-alive connection idle longer than this may be closed by the server while our request is
// on its way, which would make a non-idempotent request ambiguous; such requests get a fresh one.
constexpr auto kFreshEnoughForNonIdempotent = 2s;
// Room for an answer's reads. Beast reads as much as the buffer has room for, and a buffer that its
// parser empties after every read never grows past its first 512 bytes: a created order's answer
// took seven reads.
constexpr std::size_t kReadRoom = 64 * 1024;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// A handshake that failed because the peer's certificate did not verify (untrusted issuer, expired,
// or not for this host), as opposed to a network failure.
bool is_certificate_refusal(const boost::system::error_code& error) {
  return error.category() == asio::error::get_ssl_category() &&
         ERR_GET_REASON(static_cast<unsigned long>(error.value())) == SSL_R_CERTIFICATE_VERIFY_FAILED;
}

// Why, and what the operator can change: the certificate chain is checked against api.ca_file (or
// the system's CAs) and must name the host of api.base_url.
std::string certificate_refusal(SSL* ssl, const BaseUrl& base, const std::optional<std::filesystem::path>& ca_file) {
  const long result = SSL_get_verify_result(ssl);
  const std::string why = result == X509_V_OK || result == X509_V_ERR_UNSPECIFIED
                              ? fmt::format("it is not issued for {}", base.host)
                              : X509_verify_cert_error_string(result);
  const std::string trusted =
      ca_file ? fmt::format("the CA in api.ca_file {}", ca_file->string()) : std::string("the system's CAs");
  return fmt::format("TLS handshake with {}:{}: the provider's certificate is not trusted ({}). It is checked "
                     "against {} and must name the host {}: set api.ca_file to the PEM certificate of the CA "
                     "that signed it, or make api.base_url name a host the certificate is issued for",
                     base.host, base.port, why, trusted, base.host);
}

}  // namespace

std::optional<BaseUrl> parse_base_url(std::string_view url) {
  BaseUrl base;
  if (url.rfind("https://", 0) == 0) {
    url.remove_prefix(8);
  } else if (url.rfind("http://", 0) == 0) {
    url.remove_prefix(7);
    base.tls = false;
    base.port = 80;
  } else {
    return std::nullopt;
  }
  const std::size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : url.substr(slash);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  base.path_prefix = std::string(path);
  // "[::1]:8080", "host:8080", "host"
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return std::nullopt;
      port = authority.substr(close + 2);
    }
  } else if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return std::nullopt;
  base.host = std::string(host);
  if (!port.empty()) {
    unsigned value = 0;
    const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (error != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535) return std::nullopt;
    base.port = static_cast<std::uint16_t>(value);
  }
  return base;
}

std::optional<std::string_view> HttpResponse::header(std::string_view lower_case_name) const {
  const auto found = headers.find(std::string(lower_case_name));
  if (found == headers.end()) return std::nullopt;
  return std::string_view(found->second);
}

struct Transport::TlsContext {
  ssl::context context{ssl::context::tls_client};
};

class Transport::Connection {
 public:
  using Plain = beast::tcp_stream;
  using Tls = beast::ssl_stream<beast::tcp_stream>;

  explicit Connection(Plain plain) : stream_(std::in_place_type<Plain>, std::move(plain)) { buffer_.reserve(kReadRoom); }
  explicit Connection(Tls tls) : stream_(std::in_place_type<Tls>, std::move(tls)) { buffer_.reserve(kReadRoom); }

  beast::tcp_stream& tcp() {
    if (auto* tls = std::get_if<Tls>(&stream_)) return tls->next_layer();
    return std::get<Plain>(stream_);
  }

  // Writes the request and reads the answer. Sets `sent` once the whole request has left.
  asio::awaitable<boost::system::error_code> exchange(http::request<http::string_body>& request,
                                                      http::response_parser<http::string_body>& parser, bool& sent) {
    if (auto* tls = std::get_if<Tls>(&stream_)) co_return co_await exchange_on(*tls, request, parser, sent);
    co_return co_await exchange_on(std::get<Plain>(stream_), request, parser, sent);
  }

  bool reused = false;
  std::chrono::steady_clock::time_point idle_since;

 private:
  template <typename Stream>
  asio::awaitable<boost::system::error_code> exchange_on(Stream& stream, http::request<http::string_body>& request,
                                                         http::response_parser<http::string_body>& parser,
                                                         bool& sent) {
    boost::system::error_code error;
    co_await http::async_write(stream, request, asio::redirect_error(asio::use_awaitable, error));
    if (error) co_return error;
    sent = true;
    co_await http::async_read(stream, buffer_, parser, asio::redirect_error(asio::use_awaitable, error));
    co_return error;
  }

  std::variant<Plain, Tls> stream_;
  beast::flat_buffer buffer_;
};

Transport::Transport(asio::any_io_executor executor, TransportOptions options)
    : executor_(std::move(executor)),
      options_(std::move(options)),
      tls_(std::make_unique<TlsContext>()),
      pool_freed_(std::make_unique<asio::steady_timer>(executor_)) {
  auto& context = tls_->context;
  context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                      ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  context.set_verify_mode(ssl::verify_peer);
  boost::system::error_code error;
  if (options_.ca_file) {
    context.load_verify_file(options_.ca_file->string(), error);
    if (error) {
      throw std::runtime_error(fmt::format("api.ca_file {}: {}", options_.ca_file->string(), error.message()));
    }
  } else {
    context.set_default_verify_paths(error);
    if (error) throw std::runtime_error("cannot load the system's CA certificates: " + error.message());
  }
  if (options_.pool_size == 0) options_.pool_size = 1;
}

Transport::~Transport() = default;

void Transport::close_idle() {
  open_ -= idle_.size();
  idle_.clear();
}

asio::awaitable<std::unique_ptr<Transport::Connection>> Transport::checkout(TransportError& failure) {
  for (;;) {
    if (!idle_.empty()) {
      auto connection = std::move(idle_.back());
      idle_.pop_back();
      co_return connection;
    }
    if (open_ < options_.pool_size) break;
    // Every connection is busy: wait until one comes back.
    pool_freed_->expires_at(std::chrono::steady_clock::time_point::max());
    boost::system::error_code ignored;
    co_await pool_freed_->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  ++open_;
  const BaseUrl& base = options_.base;
  const std::string where = fmt::format("{}:{}", base.host, base.port);
  boost::system::error_code error;
  tcp::resolver resolver(executor_);
  const auto endpoints = co_await resolver.async_resolve(base.host, std::to_string(base.port),
                                                         asio::redirect_error(asio::use_awaitable, error));
  if (error) {
    --open_;
    failure.what = fmt::format("resolve {}: {}", base.host, error.message());
    co_return nullptr;
  }
  beast::tcp_stream stream(executor_);
  stream.expires_after(options_.connect_timeout);
  co_await stream.async_connect(endpoints, asio::redirect_error(asio::use_awaitable, error));
  if (error) {
    --open_;
    failure.what = fmt::format("connect {}: {}", where, error == beast::error::timeout ? "timed out" : error.message());
    co_return nullptr;
  }
  stream.socket().set_option(tcp::no_delay(true), error);
  if (!base.tls) co_return std::make_unique<Connection>(std::move(stream));

  Connection::Tls tls(std::move(stream), tls_->context);
  // SNI, and a certificate that must name the host we asked for.
  // SSL_set_tlsext_host_name is a macro with a C-style cast; this is its expansion.
  if (SSL_ctrl(tls.native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
               const_cast<char*>(base.host.c_str())) != 1) {
    --open_;
    failure.what = fmt::format("TLS {}: cannot set SNI", where);
    co_return nullptr;
  }
  tls.set_verify_callback(ssl::host_name_verification(base.host));
  tls.next_layer().expires_after(options_.connect_timeout);
  co_await tls.async_handshake(ssl::stream_base::client, asio::redirect_error(asio::use_awaitable, error));
  if (error) {
    --open_;
    if (is_certificate_refusal(error)) {
      failure.certificate_refused = true;
      failure.what = certificate_refusal(tls.native_handle(), base, options_.ca_file);
      refused_certificate_ = failure.what;
    } else {
      failure.what = fmt::format("TLS handshake with {}: {}", where,
                                 error == beast::error::timeout ? "timed out" : error.message());
    }
    co_return nullptr;
  }
  refused_certificate_.reset();
  co_return std::make_unique<Connection>(std::move(tls));
}

void Transport::checkin(std::unique_ptr<Connection> connection) {
  if (connection) {
    connection->reused = true;
    connection->idle_since = std::chrono::steady_clock::now();
    idle_.push_back(std::move(connection));
  } else {
    --open_;
  }
  pool_freed_->cancel_one();
}

asio::awaitable<TransportResult> Transport::send(HttpRequest request) {
  http::request<http::string_body> message;
  message.method_string(request.method);
  message.target(request.target);
  message.version(11);
  message.set(http::field::host, options_.base.host);
  for (const auto& [name, value] : request.headers) message.set(name, value);
  message.body() = std::move(request.body);
  if (!message.body().empty() || request.method != "GET") message.prepare_payload();
  message.keep_alive(true);

  // A kept-alive connection may have been closed by the provider while idle; an idempotent
  // request then gets one more try on a fresh connection.
  for (int attempt = 0;; ++attempt) {
    TransportError failure{TransportError::Stage::not_sent, ""};
    auto connection = co_await checkout(failure);
    while (connection && !request.idempotent && connection->reused &&
           std::chrono::steady_clock::now() - connection->idle_since > kFreshEnoughForNonIdempotent) {
      checkin(nullptr);
      connection = co_await checkout(failure);
    }
    if (!connection) co_return failure;

    http::response_parser<http::string_body> parser;
    parser.body_limit(options_.max_response_bytes);
    connection->tcp().expires_after(options_.request_timeout);
    bool sent = false;
    const boost::system::error_code error = co_await connection->exchange(message, parser, sent);
    if (!error) {
      HttpResponse response;
      auto& answer = parser.get();
      response.status = static_cast<int>(answer.result_int());
      for (const auto& field : answer) {
        const auto name = field.name_string();
        response.headers[lower(std::string_view(name.data(), name.size()))] = std::string(field.value());
      }
      const bool keep = answer.keep_alive();
      response.body = std::move(answer.body());
      checkin(keep ? std::move(connection) : nullptr);
      co_return response;
    }
    const bool stale = connection->reused && !parser.got_some() &&
                       (error == http::error::end_of_stream || error == asio::error::connection_reset ||
                        error == asio::error::broken_pipe || error == asio::error::eof);
    checkin(nullptr);
    if (stale && request.idempotent && attempt == 0) continue;
    const std::string what = error == beast::error::timeout ? "timed out" : error.message();
    if (!sent) co_return TransportError{TransportError::Stage::not_sent, "sending request: " + what};
    co_return TransportError{TransportError::Stage::sent, "waiting for the answer: " + what};
  }
}

}  // namespace fulfillsync::api
