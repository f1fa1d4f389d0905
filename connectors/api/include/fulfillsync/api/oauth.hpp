#pragma once
// OAuth 2.0 for the provider's authorization server: the authorization-code flow with PKCE S256
// (for `fulfillsyncd auth login`) and refresh-token rotation (for the running daemon).
//
// The provider issues a new refresh token with every refresh and the old one is spent at once, so
// the new pair is committed to the TokenStore before the new access token is used: a crash between
// the two loses nothing.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "fulfillsync/api/api_metrics.hpp"
#include "fulfillsync/api/token_source.hpp"
#include "fulfillsync/api/transport.hpp"

namespace fulfillsync::api {

struct OAuthOptions {
  std::string auth_url;  // e.g. https://auth.example.com (the /connect/... paths are added)
  std::string client_id;
  std::string client_secret;
  std::string redirect_uri;
  std::vector<std::string> scopes;
};

struct OAuthTokens {
  std::string access_token;
  std::string refresh_token;
  std::chrono::system_clock::time_point expires_at;
};

// Where the tokens live between runs: the daemon's checkpoint store.
class TokenStore {
 public:
  virtual ~TokenStore() = default;
  virtual std::optional<OAuthTokens> load() = 0;
  // Durable when it returns (the store commits with a full sync). Throws on failure.
  virtual void save(const OAuthTokens& tokens) = 0;
};

struct Pkce {
  std::string verifier;   // 86 characters from A-Z a-z 0-9 - _
  std::string challenge;  // base64url(SHA-256(verifier)), no padding
};
Pkce make_pkce();

// A random URL-safe value for `state` and `nonce`.
std::string random_state();

// GET {auth_url}/connect/authorize?... with response_mode=form_post.
std::string authorize_url(const OAuthOptions& options, const Pkce& pkce, const std::string& state,
                          const std::string& nonce);

// What came back to the redirect URI: a query string, a form_post body, or a pasted URL (query or
// fragment). Nothing when it holds neither a code nor an error.
struct AuthorizationResponse {
  std::optional<std::string> code;
  std::optional<std::string> state;
  std::optional<std::string> error;  // error and error_description, when the user or server refused
};
std::optional<AuthorizationResponse> parse_authorization_response(std::string_view text);

// The outcome of a call to /connect/token.
struct TokenGrant {
  std::optional<OAuthTokens> tokens;
  std::string error;  // why not, for the operator (never holds a token)
  bool definitive = false;  // the server refused (a spent or revoked refresh token): asking again won't help
};

// POST /connect/token with grant_type=authorization_code.
boost::asio::awaitable<TokenGrant> exchange_code(Transport& auth, const OAuthOptions& options, const std::string& code,
                                                 const std::string& verifier);

// POST /connect/token with grant_type=refresh_token.
boost::asio::awaitable<TokenGrant> refresh_tokens(Transport& auth, const OAuthOptions& options,
                                                  const std::string& refresh_token);

// The running daemon's token: refreshed ahead of expiry, and once after a 401.
class OAuthTokenSource final : public TokenSource {
 public:
  OAuthTokenSource(Transport& auth, OAuthOptions options, TokenStore& store, ApiMetrics& metrics,
                   std::chrono::seconds refresh_ahead = std::chrono::minutes(5));

  boost::asio::awaitable<std::optional<std::string>> access_token() override;
  boost::asio::awaitable<bool> refresh() override;
  std::string_view kind() const override { return "OAuth token"; }

 private:
  boost::asio::awaitable<bool> refresh_once();

  Transport& auth_;
  OAuthOptions options_;
  TokenStore& store_;
  ApiMetrics& metrics_;
  std::chrono::seconds refresh_ahead_;
  std::optional<OAuthTokens> tokens_;
  bool refreshing_ = false;
  std::optional<boost::asio::steady_timer> refreshed_;  // wakes callers waiting for a refresh in progress
};

}  // namespace fulfillsync::api
