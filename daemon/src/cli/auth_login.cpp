#include "cli/auth_login.hpp"

#include <unistd.h>

#include <iostream>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/api/oauth.hpp"
#include "fulfillsync/api/token_source.hpp"
#include "fulfillsync/common/crypto.hpp"
#include "fulfillsync/daemon/exit_codes.hpp"
#include "fulfillsync/daemon/store/checkpoint_store.hpp"
#include "store/checkpoint_token_store.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

// The first authorization answer, from the browser or from standard input.
struct Login {
  std::optional<api::AuthorizationResponse> answer;
  asio::steady_timer arrived;
  explicit Login(asio::io_context& io) : arrived(io, std::chrono::steady_clock::time_point::max()) {}
  void deliver(api::AuthorizationResponse response) {
    if (answer) return;
    answer = std::move(response);
    arrived.cancel();
  }
};

asio::awaitable<void> listen_for_callback(tcp::acceptor& acceptor, std::string path, Login& login) {
  while (!login.answer) {
    boost::system::error_code error;
    tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, error));
    if (error) co_return;
    beast::tcp_stream stream(std::move(socket));
    stream.expires_after(30s);
    beast::flat_buffer buffer;
    http::request<http::string_body> request;
    co_await http::async_read(stream, buffer, request, asio::redirect_error(asio::use_awaitable, error));
    if (error) continue;
    const std::string target(request.target());
    std::optional<api::AuthorizationResponse> answer;
    if (target.substr(0, target.find('?')) == path) {
      // form_post sends the answer as the body; a plain redirect puts it in the query.
      answer = api::parse_authorization_response(request.method() == http::verb::post ? request.body() : target);
    }
    http::response<http::string_body> response{answer ? http::status::ok : http::status::not_found, 11};
    response.set(http::field::content_type, "text/plain; charset=utf-8");
    response.body() = answer ? "fulfillsync received the authorization; you can close this window.\n"
                             : "Not the fulfillsync callback.\n";
    response.prepare_payload();
    response.keep_alive(false);
    co_await http::async_write(stream, response, asio::redirect_error(asio::use_awaitable, error));
    if (answer) login.deliver(std::move(*answer));
  }
}

asio::awaitable<void> read_pasted_url(asio::posix::stream_descriptor& input, Login& login) {
  asio::streambuf buffer;
  while (!login.answer) {
    boost::system::error_code error;
    co_await asio::async_read_until(input, buffer, '\n', asio::redirect_error(asio::use_awaitable, error));
    if (error) co_return;  // end of input: wait for the browser alone
    std::istream in(&buffer);
    std::string line;
    std::getline(in, line);
    if (auto answer = api::parse_authorization_response(line)) {
      login.deliver(std::move(*answer));
    } else if (!line.empty()) {
      std::cout << "That holds no code; paste the whole address the browser was sent to.\n" << std::flush;
    }
  }
}

}  // namespace

int auth_login(const config::Config& config) {
  if (!config.api.oauth) {
    std::cerr << "fulfillsyncd auth login: api.oauth is not configured (the daemon uses a personal access token)\n";
    return exit_code::config;
  }
  const config::OAuthConfig& oauth = *config.api.oauth;
  std::unique_ptr<CheckpointStore> store;
  api::OAuthOptions options;
  try {
    store = std::make_unique<CheckpointStore>(config.checkpoint.path);
    options = {oauth.auth_url, oauth.client_id, api::read_token_file(oauth.client_secret_file), oauth.redirect_uri,
               oauth.scopes};
  } catch (const std::exception& e) {
    std::cerr << "fulfillsyncd auth login: " << e.what() << '\n';
    return exit_code::unavailable;
  }

  asio::io_context io;
  const auto auth_base = api::parse_base_url(oauth.auth_url);
  const auto redirect = api::parse_base_url(oauth.redirect_uri);  // validated as loopback http by the loader
  if (!auth_base || !redirect) {
    std::cerr << "fulfillsyncd auth login: api.oauth.auth_url or redirect_uri is not a URL\n";
    return exit_code::config;
  }
  api::Transport auth(io.get_executor(), api::TransportOptions{*auth_base, config.api.ca_file,
                                                              config.api.connect_timeout, config.api.request_timeout, 1});
  tcp::acceptor acceptor(io);
  try {
    const tcp::endpoint endpoint(asio::ip::make_address(redirect->host == "localhost" ? "127.0.0.1" : redirect->host),
                                 redirect->port);
    acceptor.open(endpoint.protocol());
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    acceptor.bind(endpoint);
    acceptor.listen();
  } catch (const std::exception& e) {
    std::cerr << "fulfillsyncd auth login: cannot listen on " << oauth.redirect_uri << ": " << e.what() << '\n';
    return exit_code::unavailable;
  }

  const api::Pkce pkce = api::make_pkce();
  const std::string state = api::random_state();
  std::cout << "Open this address in a browser and approve fulfillsync:\n\n  "
            << api::authorize_url(options, pkce, state, api::random_state())
            << "\n\nWaiting for the callback on " << oauth.redirect_uri
            << " (or paste the address the browser was sent to, then Enter):\n"
            << std::flush;

  Login login(io);
  // Standard input may be a file or /dev/null, which cannot be waited on: then the browser alone.
  std::optional<asio::posix::stream_descriptor> input;
  try {
    input.emplace(io, ::dup(STDIN_FILENO));
    input->non_blocking(true);
  } catch (const std::exception&) {
    input.reset();
  }
  const std::string callback_path = redirect->path_prefix.empty() ? "/" : redirect->path_prefix;
  asio::co_spawn(io, listen_for_callback(acceptor, callback_path, login), asio::detached);
  if (input) asio::co_spawn(io, read_pasted_url(*input, login), asio::detached);

  int result = exit_code::software;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        boost::system::error_code ignored;
        co_await login.arrived.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
        acceptor.close();
        if (input) input->close();
        const api::AuthorizationResponse& answer = *login.answer;
        if (answer.error) {
          std::cerr << "The authorization was refused: " << *answer.error << '\n';
          result = exit_code::unavailable;
          co_return;
        }
        // The state we sent must come back, or the answer belongs to some other request.
        if (!answer.state || !crypto::equal(*answer.state, state)) {
          std::cerr << "The callback's state does not match this login; start again.\n";
          result = exit_code::unavailable;
          co_return;
        }
        const api::TokenGrant grant = co_await api::exchange_code(auth, options, *answer.code, pkce.verifier);
        if (!grant.tokens) {
          std::cerr << "Could not exchange the code for tokens: " << grant.error << '\n';
          result = exit_code::unavailable;
          co_return;
        }
        if (grant.tokens->refresh_token.empty()) {
          std::cerr << "Warning: no refresh token was granted (add offline_access to api.oauth.scopes); the daemon "
                       "will need a new login within the hour.\n";
        }
        CheckpointTokenStore(*store).save(*grant.tokens);
        std::cout << "Logged in; the tokens are stored in " << store->path().string() << ".\n";
        result = exit_code::ok;
      },
      asio::detached);
  io.run();
  return result;
}

}  // namespace fulfillsync::daemon
