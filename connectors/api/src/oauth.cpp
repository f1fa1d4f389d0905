#include "fulfillsync/api/oauth.hpp"

#include <fmt/format.h>
#include <simdjson.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/api/outcome.hpp"
#include "fulfillsync/api/url.hpp"
#include "fulfillsync/common/crypto.hpp"

namespace fulfillsync::api {
namespace asio = boost::asio;

namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : " ") + word;
  return out;
}

std::string endpoint_target(const OAuthOptions& options, std::string_view endpoint) {
  const auto base = parse_base_url(options.auth_url);
  return (base ? base->path_prefix : std::string()) + std::string(endpoint);
}

// Reads the token endpoint's JSON answer. Refresh tokens come only with offline_access; without
// one the previous refresh token stays in use.
std::optional<OAuthTokens> parse_token_response(const std::string& body, std::string& error) {
  simdjson::ondemand::parser parser;
  const simdjson::padded_string padded(body);
  simdjson::ondemand::document document;
  if (parser.iterate(padded).get(document) != simdjson::SUCCESS) {
    error = "the token endpoint answered something that is not JSON";
    return std::nullopt;
  }
  OAuthTokens tokens;
  std::int64_t expires_in = 3600;
  bool have_access = false;
  simdjson::ondemand::object object;
  if (document.get_object().get(object) != simdjson::SUCCESS) {
    error = "the token endpoint answered JSON that is not an object";
    return std::nullopt;
  }
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) break;
    std::string_view text;
    if (key == "access_token" && field.value().get_string().get(text) == simdjson::SUCCESS) {
      tokens.access_token = std::string(text);
      have_access = !text.empty();
    } else if (key == "refresh_token" && field.value().get_string().get(text) == simdjson::SUCCESS) {
      tokens.refresh_token = std::string(text);
    } else if (key == "expires_in") {
      std::int64_t seconds = 0;
      if (field.value().get_int64().get(seconds) == simdjson::SUCCESS && seconds > 0) expires_in = seconds;
    }
  }
  if (!have_access) {
    error = "the token endpoint's answer has no access_token";
    return std::nullopt;
  }
  tokens.expires_at = std::chrono::system_clock::now() + std::chrono::seconds(expires_in);
  return tokens;
}

asio::awaitable<TokenGrant> post_token_form(Transport& auth, const OAuthOptions& options, const Query& form) {
  HttpRequest request;
  request.method = "POST";
  request.target = endpoint_target(options, "/connect/token");
  request.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
  request.headers.emplace_back("Accept", "application/json");
  request.body = encode_query(form);
  const Outcome outcome = classify(co_await auth.send(std::move(request)));
  TokenGrant grant;
  if (outcome.ok()) {
    grant.tokens = parse_token_response(outcome.response.body, grant.error);
    co_return grant;
  }
  // 400 invalid_grant and 401 invalid_client are the server's final word on these credentials.
  grant.definitive = outcome.kind == OutcomeKind::rejected || outcome.kind == OutcomeKind::unauthorized ||
                     outcome.kind == OutcomeKind::forbidden;
  grant.error = fmt::format("token endpoint: {} ({})", to_string(outcome.kind), outcome.detail);
  co_return grant;
}

}  // namespace

Pkce make_pkce() {
  // 64 random bytes are 86 base64url characters: within the 43..128 the spec allows.
  Pkce pkce;
  pkce.verifier = crypto::base64url(crypto::random_bytes(64));
  pkce.challenge = crypto::base64url(crypto::sha256(pkce.verifier));
  return pkce;
}

std::string random_state() { return crypto::base64url(crypto::random_bytes(24)); }

std::string authorize_url(const OAuthOptions& options, const Pkce& pkce, const std::string& state,
                          const std::string& nonce) {
  std::string url = options.auth_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url + "/connect/authorize?" +
         encode_query({{"client_id", options.client_id},
                       {"response_type", "code"},
                       {"scope", joined(options.scopes)},
                       {"redirect_uri", options.redirect_uri},
                       {"code_challenge", pkce.challenge},
                       {"code_challenge_method", "S256"},
                       {"response_mode", "form_post"},
                       {"integration_name", "fulfillsync"},
                       {"state", state},
                       {"nonce", nonce}});
}

std::optional<AuthorizationResponse> parse_authorization_response(std::string_view text) {
  // A pasted URL carries the answer in its query or its fragment; a form_post body is the answer.
  if (const std::size_t mark = text.find_first_of("?#"); mark != std::string_view::npos) text.remove_prefix(mark + 1);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  AuthorizationResponse response;
  std::string description;
  for (auto& [name, value] : parse_query_string(text)) {
    if (name == "code") response.code = std::move(value);
    else if (name == "state") response.state = std::move(value);
    else if (name == "error") response.error = std::move(value);
    else if (name == "error_description") description = std::move(value);
  }
  if (response.error && !description.empty()) *response.error += ": " + description;
  if (!response.code && !response.error) return std::nullopt;
  return response;
}

asio::awaitable<TokenGrant> exchange_code(Transport& auth, const OAuthOptions& options, const std::string& code,
                                          const std::string& verifier) {
  // Built outside the co_await: GCC 12 miscompiles braced lists in a coroutine's co_await operand.
  Query form;
  form.emplace_back("grant_type", "authorization_code");
  form.emplace_back("client_id", options.client_id);
  form.emplace_back("client_secret", options.client_secret);
  form.emplace_back("code", code);
  form.emplace_back("redirect_uri", options.redirect_uri);
  form.emplace_back("code_verifier", verifier);
  co_return co_await post_token_form(auth, options, form);
}

asio::awaitable<TokenGrant> refresh_tokens(Transport& auth, const OAuthOptions& options,
                                           const std::string& refresh_token) {
  Query form;
  form.emplace_back("grant_type", "refresh_token");
  form.emplace_back("client_id", options.client_id);
  form.emplace_back("client_secret", options.client_secret);
  form.emplace_back("refresh_token", refresh_token);
  co_return co_await post_token_form(auth, options, form);
}

OAuthTokenSource::OAuthTokenSource(Transport& auth, OAuthOptions options, TokenStore& store, ApiMetrics& metrics,
                                   std::chrono::seconds refresh_ahead)
    : auth_(auth), options_(std::move(options)), store_(store), metrics_(metrics), refresh_ahead_(refresh_ahead) {}

asio::awaitable<std::optional<std::string>> OAuthTokenSource::access_token() {
  if (!tokens_) tokens_ = store_.load();
  if (!tokens_) {
    spdlog::error("no OAuth tokens in the checkpoint store: run 'fulfillsyncd auth login' once");
    co_return std::nullopt;
  }
  if (std::chrono::system_clock::now() + refresh_ahead_ >= tokens_->expires_at) {
    // A failed refresh leaves the old access token, which may still be valid for a while.
    co_await refresh();
  }
  co_return tokens_->access_token;
}

asio::awaitable<bool> OAuthTokenSource::refresh() {
  if (refreshing_) {
    // One refresh at a time: a second would present a refresh token the first has just spent.
    while (refreshing_) {
      boost::system::error_code ignored;
      co_await refreshed_->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    }
    co_return tokens_.has_value();
  }
  refreshing_ = true;
  if (!refreshed_) refreshed_.emplace(co_await asio::this_coro::executor, std::chrono::steady_clock::time_point::max());
  const bool renewed = co_await refresh_once();
  refreshing_ = false;
  refreshed_->cancel();
  metrics_.count_token_refresh(renewed);
  co_return renewed;
}

asio::awaitable<bool> OAuthTokenSource::refresh_once() {
  if (!tokens_) tokens_ = store_.load();
  if (!tokens_ || tokens_->refresh_token.empty()) {
    spdlog::error("cannot refresh the OAuth token: no refresh token stored (was offline_access granted?); run "
                  "'fulfillsyncd auth login'");
    co_return false;
  }
  TokenGrant grant = co_await refresh_tokens(auth_, options_, tokens_->refresh_token);
  if (!grant.tokens) {
    if (grant.definitive) {
      spdlog::critical("the OAuth refresh token was refused ({}); run 'fulfillsyncd auth login'", grant.error);
    } else {
      spdlog::warn("OAuth token refresh failed: {}", grant.error);
    }
    co_return false;
  }
  if (grant.tokens->refresh_token.empty()) grant.tokens->refresh_token = tokens_->refresh_token;
  try {
    store_.save(*grant.tokens);  // durable before the new access token is used
  } catch (const std::exception& e) {
    spdlog::critical("cannot store the refreshed OAuth tokens: {}", e.what());
    co_return false;
  }
  tokens_ = std::move(grant.tokens);
  spdlog::info("OAuth access token refreshed");
  co_return true;
}

}  // namespace fulfillsync::api
