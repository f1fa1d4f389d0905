#include "fulfillsync/sandbox/server.hpp"

#include "fulfillsync/common/asio.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/sandbox/error_bodies.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>

namespace fulfillsync::sandbox {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

constexpr std::size_t kHeaderLimit = 16 * 1024;
constexpr std::size_t kMaxConnections = 1024;
constexpr auto kDrainTime = std::chrono::seconds(2);

struct ServerContext {
  Sandbox& sandbox;
  const SandboxOptions& options;
  std::size_t connections = 0;
};

HttpRequest to_sandbox_request(http::request<http::string_body>& request) {
  HttpRequest converted;
  converted.method = std::string(request.method_string());
  converted.target = std::string(request.target());
  converted.headers.reserve(8);
  for (const auto& field : request) {
    std::string name(field.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    converted.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  converted.body = std::move(request.body());
  return converted;
}

http::response<http::string_body> to_beast_response(HttpResponse& response, unsigned version, bool keep_alive) {
  http::response<http::string_body> out{static_cast<http::status>(response.status), version};
  out.set(http::field::server, "fulfillsync-sandbox");
  out.set(http::field::content_type, response.content_type);
  for (auto& [name, value] : response.headers) out.set(name, value);
  out.keep_alive(keep_alive);
  out.body() = std::move(response.body);
  out.prepare_payload();
  return out;
}

template <typename Stream>
void close_now(Stream& stream) {
  beast::error_code ignored;
  beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
  beast::get_lowest_layer(stream).socket().close(ignored);
}

// Answers a request that could not be read (too large, malformed) and closes; the input is
// drained for a moment first so the client reads the answer instead of a reset.
template <typename Stream>
asio::awaitable<void> refuse(Stream& stream, int status, std::string_view detail) {
  HttpResponse response = problem(status, detail, "");
  auto out = to_beast_response(response, 11, false);
  beast::error_code ec;
  beast::get_lowest_layer(stream).expires_after(kDrainTime);
  co_await http::async_write(stream, out, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return;
  auto& socket = beast::get_lowest_layer(stream).socket();
  socket.shutdown(tcp::socket::shutdown_send, ec);
  char sink[16384];
  std::size_t drained = 0;
  while (!ec && drained < 64 * 1024 * 1024) {
    drained += co_await beast::get_lowest_layer(stream).async_read_some(
        asio::buffer(sink), asio::redirect_error(asio::use_awaitable, ec));
  }
}

template <typename Stream>
asio::awaitable<void> serve_requests(Stream& stream, ServerContext& context) {
  beast::flat_buffer buffer;
  // Beast reads as much as the buffer has room for; emptied by the parser after every read, it
  // would stay at its first 512 bytes and a request would take several reads.
  buffer.reserve(64 * 1024);
  const auto read_timeout = std::chrono::seconds(context.options.read_timeout_seconds);
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(context.options.max_body_bytes);
    beast::get_lowest_layer(stream).expires_after(read_timeout);
    beast::error_code ec;
    co_await http::async_read_header(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
    if (!ec && beast::iequals(parser.get()[http::field::expect], "100-continue")) {
      // curl and others wait for this before sending a larger body.
      http::response<http::empty_body> go_on{http::status::continue_, parser.get().version()};
      co_await http::async_write(stream, go_on, asio::redirect_error(asio::use_awaitable, ec));
    }
    if (!ec && !parser.is_done()) {
      co_await http::async_read(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
    }
    if (ec == http::error::body_limit) {
      co_await refuse(stream, 413, "The request body exceeds " + std::to_string(context.options.max_body_bytes) + " bytes.");
      co_return;
    }
    if (ec == http::error::header_limit) {
      co_await refuse(stream, 431, "The request headers exceed " + std::to_string(kHeaderLimit) + " bytes.");
      co_return;
    }
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::eof ||
        ec == asio::error::connection_reset || ec == asio::error::operation_aborted || ec == http::error::partial_message) {
      co_return;
    }
    if (ec) {
      if (ec.category() == asio::error::get_ssl_category()) co_return;
      co_await refuse(stream, 400, "The request is not valid HTTP/1.1: " + ec.message() + ".");
      co_return;
    }
    auto& beast_request = parser.get();
    const unsigned version = beast_request.version();
    bool keep_alive = beast_request.keep_alive();
    HttpRequest request = to_sandbox_request(beast_request);

    Sandbox& sandbox = context.sandbox;
    const FaultDecision fault = sandbox.decide_fault(request);
    sandbox.count_fault(fault);
    if (fault.latency.count() > 0) {
      asio::steady_timer delay(co_await asio::this_coro::executor);
      delay.expires_after(fault.latency);
      co_await delay.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    if (fault.kind == FaultKind::drop_before) {
      close_now(stream);
      co_return;
    }
    HttpResponse response;
    try {
      response = fault.kind == FaultKind::status ? sandbox.fault_response(fault, request) : sandbox.handle(request);
    } catch (const std::exception& error) {
      spdlog::error("{} {}: {}", request.method, request.target, error.what());
      response = problem(500, "The sandbox failed to handle the request.", request.path());
    }
    // Simulated time, as everything the sandbox dates: a client learns the provider's clock from it.
    response.set_header("date", timestamps::format_http_date(sandbox.shown_now()));
    spdlog::debug("{} {} -> {}{}", request.method, request.target, response.status,
                  fault.kind == FaultKind::none ? "" : " (fault injected)");
    sandbox.record_exchange(request, response, fault);
    if (fault.kind == FaultKind::drop_after) {
      close_now(stream);
      co_return;
    }
    if (fault.kind == FaultKind::truncated) {
      // Announces the whole body, sends half, and hangs up.
      auto out = to_beast_response(response, version, false);
      const std::string body = out.body();
      out.body() = body.substr(0, body.size() / 2);
      out.content_length(body.size());
      http::response_serializer<http::string_body> serializer(out);
      co_await http::async_write_header(stream, serializer, asio::redirect_error(asio::use_awaitable, ec));
      if (!ec) {
        co_await asio::async_write(stream, asio::buffer(out.body()), asio::redirect_error(asio::use_awaitable, ec));
      }
      close_now(stream);
      co_return;
    }
    if (fault.kind == FaultKind::malformed) {
      response.body = response.body.substr(0, response.body.size() / 2) + "\"}]<!-- upstream error -->";
      keep_alive = false;
    }
    auto out = to_beast_response(response, version, keep_alive);
    beast::get_lowest_layer(stream).expires_after(read_timeout);
    co_await http::async_write(stream, out, asio::redirect_error(asio::use_awaitable, ec));
    if (ec || !keep_alive) break;
  }
  beast::error_code ignored;
  beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> plain_session(tcp::socket socket, ServerContext& context) {
  ++context.connections;
  beast::tcp_stream stream(std::move(socket));
  try {
    co_await serve_requests(stream, context);
  } catch (const std::exception& error) {
    spdlog::debug("connection ended: {}", error.what());
  }
  --context.connections;
}

asio::awaitable<void> tls_session(tcp::socket socket, ssl::context& tls, ServerContext& context) {
  ++context.connections;
  beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), tls);
  try {
    beast::error_code ec;
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(context.options.read_timeout_seconds));
    co_await stream.async_handshake(ssl::stream_base::server, asio::redirect_error(asio::use_awaitable, ec));
    if (!ec) {
      co_await serve_requests(stream, context);
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(2));
      co_await stream.async_shutdown(asio::redirect_error(asio::use_awaitable, ec));
    }
  } catch (const std::exception& error) {
    spdlog::debug("TLS connection ended: {}", error.what());
  }
  --context.connections;
}

asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, ssl::context* tls, ServerContext& context) {
  const auto executor = co_await asio::this_coro::executor;
  for (;;) {
    beast::error_code ec;
    tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) continue;
    if (context.connections >= kMaxConnections) {
      socket.close(ec);
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    if (tls != nullptr) {
      asio::co_spawn(executor, tls_session(std::move(socket), *tls, context), asio::detached);
    } else {
      asio::co_spawn(executor, plain_session(std::move(socket), context), asio::detached);
    }
  }
}

}  // namespace

int serve(Sandbox& sandbox, const SandboxOptions& options) {
  asio::io_context io(1);
  std::unique_ptr<ssl::context> tls;
  if (options.tls_cert) {
    tls = std::make_unique<ssl::context>(ssl::context::tls_server);
    beast::error_code ec;
    tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                     ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    tls->use_certificate_chain_file(*options.tls_cert, ec);
    if (!ec) tls->use_private_key_file(*options.tls_key, ssl::context::pem, ec);
    if (ec) {
      spdlog::error("TLS: cannot load {} / {}: {}", *options.tls_cert, *options.tls_key, ec.message());
      return 1;
    }
  }

  tcp::acceptor acceptor(io);
  beast::error_code ec;
  tcp::resolver resolver(io);
  const auto endpoints = resolver.resolve(options.listen_host, std::to_string(options.listen_port),
                                          tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty()) {
    spdlog::error("cannot resolve {}: {}", options.listen_host, ec.message());
    return 1;
  }
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    spdlog::error("cannot listen on {}:{}: {}", options.listen_host, options.listen_port, ec.message());
    return 1;
  }
  const std::uint16_t port = acceptor.local_endpoint().port();

  ServerContext context{sandbox, options};
  asio::co_spawn(io, accept_loop(acceptor, tls.get(), context), asio::detached);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const beast::error_code& error, int signal) {
    if (error) return;
    spdlog::info("signal {}: stopping", signal);
    beast::error_code ignored;
    acceptor.close(ignored);
    io.stop();
  });

  const bool bracket = options.listen_host.find(':') != std::string::npos;
  std::printf("listening on %s://%s%s%s:%u\n", tls ? "https" : "http", bracket ? "[" : "", options.listen_host.c_str(),
              bracket ? "]" : "", static_cast<unsigned>(port));
  std::fflush(stdout);
  spdlog::info("fulfillsync-sandbox serving on port {} (rate limit {}, faults '{}')", port,
               options.rate_limit_per_minute > 0 ? std::to_string(options.rate_limit_per_minute) + "/min" : "off",
               sandbox.faults().spec());
  io.run();
  return 0;
}

}  // namespace fulfillsync::sandbox
