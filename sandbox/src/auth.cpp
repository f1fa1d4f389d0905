#include "fulfillsync/sandbox/auth.hpp"

#include <cctype>

#include "fulfillsync/common/crypto.hpp"

namespace fulfillsync::sandbox {

void Auth::add_personal_token(std::string token, int merchant_id, int channel_id) {
  Principal principal;
  principal.merchant_id = merchant_id;
  principal.channel_id = channel_id;
  principal.scopes = all_read_scopes() | all_write_scopes();
  principal.application = "pat";
  personal_tokens_[std::move(token)] = std::move(principal);
}

void Auth::add_client(OAuthClient client) {
  std::string id = client.client_id;
  clients_[std::move(id)] = std::move(client);
}

const OAuthClient* Auth::find_client(std::string_view client_id) const {
  const auto found = clients_.find(std::string(client_id));
  return found == clients_.end() ? nullptr : &found->second;
}

std::optional<Principal> Auth::authenticate(std::string_view authorization, TimePoint now, Failure& failure) const {
  if (authorization.empty()) {
    failure = Failure::missing;
    return std::nullopt;
  }
  constexpr std::string_view kBearer = "bearer ";
  if (authorization.size() <= kBearer.size()) {
    failure = Failure::malformed;
    return std::nullopt;
  }
  for (std::size_t i = 0; i < kBearer.size(); ++i) {
    if (static_cast<char>(std::tolower(static_cast<unsigned char>(authorization[i]))) != kBearer[i]) {
      failure = Failure::malformed;
      return std::nullopt;
    }
  }
  const std::string token(authorization.substr(kBearer.size()));
  if (const auto pat = personal_tokens_.find(token); pat != personal_tokens_.end()) return pat->second;
  const auto issued = tokens_.find(token);
  if (issued == tokens_.end() || issued->second.refresh) {
    failure = Failure::unknown;
    return std::nullopt;
  }
  if (now >= issued->second.expires_at) {
    failure = Failure::expired;
    return std::nullopt;
  }
  return issued->second.principal;
}

std::string Auth::next_opaque(std::string_view purpose) {
  return crypto::hmac_sha256(secret_, std::string(purpose) + ":" + std::to_string(++counter_));
}

std::string Auth::issue_code(AuthorizationCode code) {
  std::string value = crypto::base64url(next_opaque("code"));
  codes_[value] = std::move(code);
  return value;
}

AuthorizationCode* Auth::find_code(std::string_view code) {
  const auto found = codes_.find(std::string(code));
  return found == codes_.end() ? nullptr : &found->second;
}

std::string Auth::issue_token(const Principal& principal, std::string_view client_id, TimePoint expires_at,
                              bool refresh) {
  std::string value = (refresh ? "rt_" : "at_") + crypto::base64url(next_opaque(refresh ? "refresh" : "access"));
  IssuedToken token;
  token.principal = principal;
  token.client_id = std::string(client_id);
  token.expires_at = expires_at;
  token.refresh = refresh;
  tokens_[value] = std::move(token);
  return value;
}

IssuedToken* Auth::find_token(std::string_view token) {
  const auto found = tokens_.find(std::string(token));
  return found == tokens_.end() ? nullptr : &found->second;
}

std::optional<int> Auth::application_channel(int merchant_id, const std::string& client_id) const {
  const auto found = application_channels_.find({merchant_id, client_id});
  if (found == application_channels_.end()) return std::nullopt;
  return found->second;
}

void Auth::set_application_channel(int merchant_id, const std::string& client_id, int channel_id) {
  application_channels_[{merchant_id, client_id}] = channel_id;
}

}  // namespace fulfillsync::sandbox
