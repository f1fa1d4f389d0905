#pragma once
// Who is calling: personal access tokens, OAuth clients, authorization codes bound to a PKCE
// challenge, and the access and refresh tokens issued for them. Token values derive from a secret
// and a counter, so a journal replay (see journal.hpp) issues the same tokens again.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fulfillsync/sandbox/model.hpp"

namespace fulfillsync::sandbox {

struct Principal {
  int merchant_id = 0;
  int channel_id = 0;  // the channel of the token's application
  ScopeSet scopes = 0;
  std::string application;  // "pat" or the OAuth client id; the rate-limit window is per user and application
};

struct OAuthClient {
  std::string client_id;
  std::string client_secret;
  std::string name;
  std::vector<std::string> redirect_uris;
  ScopeSet scopes = 0;  // granted to the app; openid and offline_access are always allowed
};

struct AuthorizationCode {
  std::string client_id;
  std::string redirect_uri;
  std::string code_challenge;
  std::string nonce;
  std::string integration_name;
  ScopeSet scopes = 0;
  int merchant_id = 0;
  TimePoint expires_at{};
  bool used = false;
  std::vector<std::string> issued_tokens;  // revoked if the code is presented again
};

struct IssuedToken {
  Principal principal;
  std::string client_id;
  TimePoint expires_at{};
  bool refresh = false;
  bool spent = false;  // refresh tokens: used once, then refused
};

class Auth {
 public:
  explicit Auth(std::string secret) : secret_(std::move(secret)) {}

  void add_personal_token(std::string token, int merchant_id, int channel_id);
  void add_client(OAuthClient client);
  const OAuthClient* find_client(std::string_view client_id) const;

  enum class Failure { missing, malformed, unknown, expired };
  // Resolves an `Authorization: Bearer ...` header value.
  std::optional<Principal> authenticate(std::string_view authorization, TimePoint now, Failure& failure) const;

  std::string issue_code(AuthorizationCode code);
  AuthorizationCode* find_code(std::string_view code);
  // A new access or refresh token for `principal`, valid until `expires_at`.
  std::string issue_token(const Principal& principal, std::string_view client_id, TimePoint expires_at, bool refresh);
  IssuedToken* find_token(std::string_view token);
  void revoke(std::string_view token) { tokens_.erase(std::string(token)); }
  // A fresh opaque value (session_state, simulation ids) from the same deterministic source.
  std::string next_opaque(std::string_view purpose);
  const std::string& secret() const { return secret_; }
  // The channel created when a merchant installs an OAuth application.
  std::optional<int> application_channel(int merchant_id, const std::string& client_id) const;
  void set_application_channel(int merchant_id, const std::string& client_id, int channel_id);

 private:
  std::string secret_;
  std::uint64_t counter_ = 0;
  std::unordered_map<std::string, Principal> personal_tokens_;
  std::unordered_map<std::string, OAuthClient> clients_;
  std::unordered_map<std::string, AuthorizationCode> codes_;
  std::unordered_map<std::string, IssuedToken> tokens_;
  std::map<std::pair<int, std::string>, int> application_channels_;
};

}  // namespace fulfillsync::sandbox
