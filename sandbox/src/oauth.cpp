// OAuth 2.0 authorization code flow with PKCE (S256 only): GET /connect/authorize and
// POST /connect/token. The sandbox's root user consents at once, for the default merchant.
#include <algorithm>

#include "fulfillsync/common/crypto.hpp"
#include "fulfillsync/sandbox/handlers.hpp"
#include "fulfillsync/sandbox/sandbox.hpp"

namespace fulfillsync::sandbox {
namespace {

using namespace std::chrono_literals;
using json::JsonWriter;

constexpr auto kCodeLifetime = 10min;
constexpr auto kAccessLifetime = 3600s;
constexpr auto kRefreshLifetime = std::chrono::hours(24 * 30);

std::string html_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

// Delivers the authorization result to the client: a POSTed form (response_mode=form_post) or the
// URL fragment of a redirect.
HttpResponse deliver(std::string_view redirect_uri, bool form_post,
                     const std::vector<std::pair<std::string, std::string>>& fields) {
  HttpResponse response;
  response.set_header("cache-control", "no-store");
  if (form_post) {
    response.status = 200;
    response.content_type = "text/html; charset=utf-8";
    std::string html = "<!DOCTYPE html><html><head><title>Submit</title></head><body onload=\"document.forms[0].submit()\">"
                       "<form method=\"post\" action=\"" + html_escape(redirect_uri) + "\">";
    for (const auto& [name, value] : fields) {
      html += "<input type=\"hidden\" name=\"" + html_escape(name) + "\" value=\"" + html_escape(value) + "\"/>";
    }
    html += "<noscript><button type=\"submit\">Continue</button></noscript></form></body></html>";
    response.body = std::move(html);
    return response;
  }
  std::string location(redirect_uri);
  location.push_back('#');
  bool first = true;
  for (const auto& [name, value] : fields) {
    if (!first) location.push_back('&');
    first = false;
    location += percent_encode(name) + "=" + percent_encode(value);
  }
  response.status = 302;
  response.content_type = "text/plain; charset=utf-8";
  response.set_header("location", location);
  return response;
}

std::string id_token(const OAuthClient& client, int merchant_id, std::string_view nonce, TimePoint now) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  JsonWriter payload;
  payload.begin_object()
      .field("iss", "fulfillsync-sandbox")
      .field("sub", std::to_string(merchant_id))
      .field("aud", client.client_id)
      .field("iat", seconds)
      .field("auth_time", seconds)
      .field("exp", seconds + 3600);
  if (!nonce.empty()) payload.field("nonce", nonce);
  payload.end_object();
  const std::string signing_input =
      crypto::base64url(R"({"alg":"HS256","typ":"JWT"})") + "." + crypto::base64url(payload.str());
  return signing_input + "." + crypto::base64url(crypto::hmac_sha256(client.client_secret, signing_input));
}

bool valid_verifier(std::string_view verifier) {
  if (verifier.size() < 43 || verifier.size() > 128) return false;
  return std::all_of(verifier.begin(), verifier.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
  });
}

std::string scope_text(ScopeSet scopes) {
  std::string out;
  for (auto name : scope_names(scopes)) {
    if (!out.empty()) out.push_back(' ');
    out += name;
  }
  return out;
}

HttpResponse token_response(Sandbox& sandbox, const OAuthClient& client, const Principal& principal, ScopeSet granted,
                            std::string_view nonce, TimePoint now, std::vector<std::string>* issued) {
  Auth& auth = sandbox.auth();
  const std::string access = auth.issue_token(principal, client.client_id, now + kAccessLifetime, false);
  std::optional<std::string> refresh;
  if (granted & bit(Scope::offline_access)) {
    refresh = auth.issue_token(principal, client.client_id, now + kRefreshLifetime, true);
    if (auto* token = auth.find_token(*refresh)) token->principal.scopes = granted;
  }
  if (issued != nullptr) {
    issued->push_back(access);
    if (refresh) issued->push_back(*refresh);
  }
  JsonWriter w;
  w.begin_object()
      .field("id_token", id_token(client, principal.merchant_id, nonce, now))
      .field("access_token", access)
      .field("expires_in", 3600)
      .field("token_type", "bearer");
  if (refresh) w.field("refresh_token", *refresh);
  w.field("scope", scope_text(granted)).end_object();
  HttpResponse response = json_response(200, w.take());
  response.set_header("cache-control", "no-store");
  return response;
}

// The channel of an installed application, made on first install with the granted scopes.
Principal install(Sandbox& sandbox, const OAuthClient& client, int merchant_id, ScopeSet granted,
                  std::string_view integration_name) {
  Auth& auth = sandbox.auth();
  Store& store = sandbox.store();
  int channel_id = 0;
  if (auto existing = auth.application_channel(merchant_id, client.client_id)) {
    channel_id = *existing;
  } else {
    const ScopeSet channel_scopes = granted & (all_read_scopes() | all_write_scopes());
    channel_id = store.add_channel(merchant_id, integration_name.empty() ? client.name : std::string(integration_name),
                                   client.name, channel_scopes).id;
    auth.set_application_channel(merchant_id, client.client_id, channel_id);
  }
  Principal principal;
  principal.merchant_id = merchant_id;
  principal.channel_id = channel_id;
  principal.scopes = granted & (all_read_scopes() | all_write_scopes());
  principal.application = client.client_id;
  return principal;
}

}  // namespace

HttpResponse oauth_authorize(Sandbox& sandbox, const HttpRequest& request) {
  const Query query(request.query());
  const auto param = [&](std::string_view name) { return std::string(query.get(name).value_or("")); };
  const std::string client_id = param("client_id");
  const std::string redirect_uri = param("redirect_uri");
  const OAuthClient* client = sandbox.auth().find_client(client_id);
  // Without a known client and a registered redirect URI nothing may be sent anywhere.
  if (client == nullptr) return oauth_error(400, "invalid_client", "Unknown client_id '" + client_id + "'.");
  if (std::find(client->redirect_uris.begin(), client->redirect_uris.end(), redirect_uri) == client->redirect_uris.end()) {
    return oauth_error(400, "invalid_request", "redirect_uri '" + redirect_uri + "' is not registered for this client.");
  }
  const std::string response_mode = param("response_mode");
  const bool form_post = response_mode == "form_post";
  const std::string state = param("state");
  const auto fail = [&](std::string error, std::string description) {
    std::vector<std::pair<std::string, std::string>> fields{{"error", std::move(error)},
                                                            {"error_description", std::move(description)}};
    if (!state.empty()) fields.emplace_back("state", state);
    return deliver(redirect_uri, form_post, fields);
  };
  if (!response_mode.empty() && response_mode != "form_post" && response_mode != "fragment" && response_mode != "query") {
    return fail("invalid_request", "response_mode must be form_post or fragment.");
  }
  if (param("response_type") != "code") return fail("unsupported_response_type", "response_type must be code.");
  const std::string challenge = param("code_challenge");
  const std::string method = param("code_challenge_method");
  if (challenge.empty()) return fail("invalid_request", "code_challenge is required.");
  if (method != "S256") {
    return fail("invalid_request", "code_challenge_method must be S256" +
                                       std::string(method == "plain" ? "; plain is not allowed." : "."));
  }
  if (challenge.size() != 43) return fail("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier.");
  const std::string scope = param("scope");
  if (scope.empty()) return fail("invalid_scope", "scope is required.");
  std::string unknown;
  const auto requested = parse_scope_list(scope, unknown);
  if (!requested) return fail("invalid_scope", "The scope '" + unknown + "' does not exist.");
  const ScopeSet always = bit(Scope::openid) | bit(Scope::offline_access);
  const auto not_granted = scope_names(*requested & ~(client->scopes | always));
  if (!not_granted.empty()) {
    return fail("invalid_scope", "The scope '" + std::string(not_granted.front()) + "' is not granted to this application.");
  }
  const ScopeSet granted = *requested;
  const TimePoint now = sandbox.clock().now();
  AuthorizationCode code;
  code.client_id = client_id;
  code.redirect_uri = redirect_uri;
  code.code_challenge = challenge;
  code.nonce = param("nonce");
  code.integration_name = param("integration_name");
  code.scopes = granted;
  code.merchant_id = kDefaultMerchantId;
  code.expires_at = now + kCodeLifetime;
  const std::string nonce = code.nonce;
  const std::string issued = sandbox.auth().issue_code(std::move(code));
  std::vector<std::pair<std::string, std::string>> fields{
      {"code", issued},
      {"scope", scope_text(granted)},
      {"session_state", crypto::base64url(sandbox.auth().next_opaque("session")).substr(0, 22)},
      {"id_token", id_token(*client, kDefaultMerchantId, nonce, now)}};
  if (!state.empty()) fields.emplace_back("state", state);
  return deliver(redirect_uri, form_post, fields);
}

HttpResponse oauth_token(Sandbox& sandbox, const HttpRequest& request) {
  if (request.header("content-type").find("application/x-www-form-urlencoded") == std::string_view::npos) {
    return oauth_error(400, "invalid_request", "The body must be application/x-www-form-urlencoded.");
  }
  const Query form(request.body);
  const auto field = [&](std::string_view name) { return std::string(form.get(name).value_or("")); };
  const std::string client_id = field("client_id");
  const OAuthClient* client = sandbox.auth().find_client(client_id);
  if (client == nullptr || !crypto::equal(field("client_secret"), client->client_secret)) {
    HttpResponse response = oauth_error(401, "invalid_client", "Unknown client or wrong client_secret.");
    response.set_header("www-authenticate", "Basic realm=\"connect\"");
    return response;
  }
  const TimePoint now = sandbox.clock().now();
  const std::string grant_type = field("grant_type");
  Auth& auth = sandbox.auth();
  if (grant_type == "authorization_code") {
    const std::string code_value = field("code");
    const std::string verifier = field("code_verifier");
    if (code_value.empty() || verifier.empty() || field("redirect_uri").empty()) {
      return oauth_error(400, "invalid_request", "code, redirect_uri and code_verifier are required.");
    }
    AuthorizationCode* code = auth.find_code(code_value);
    if (code == nullptr || code->client_id != client_id) {
      return oauth_error(400, "invalid_grant", "The authorization code is not valid.");
    }
    if (code->used) {
      // A replayed code may be stolen: what it yielded is revoked too.
      for (const auto& token : code->issued_tokens) auth.revoke(token);
      code->issued_tokens.clear();
      return oauth_error(400, "invalid_grant", "The authorization code has already been used.");
    }
    if (now >= code->expires_at) return oauth_error(400, "invalid_grant", "The authorization code has expired.");
    if (code->redirect_uri != field("redirect_uri")) {
      return oauth_error(400, "invalid_grant", "redirect_uri does not match the authorization request.");
    }
    if (!valid_verifier(verifier)) {
      return oauth_error(400, "invalid_request", "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~.");
    }
    if (!crypto::equal(crypto::base64url(crypto::sha256(verifier)), code->code_challenge)) {
      return oauth_error(400, "invalid_grant", "code_verifier does not match the code_challenge.");
    }
    code->used = true;
    const Principal principal = install(sandbox, *client, code->merchant_id, code->scopes, code->integration_name);
    return token_response(sandbox, *client, principal, code->scopes, code->nonce, now, &code->issued_tokens);
  }
  if (grant_type == "refresh_token") {
    const std::string refresh_value = field("refresh_token");
    if (refresh_value.empty()) return oauth_error(400, "invalid_request", "refresh_token is required.");
    IssuedToken* refresh = auth.find_token(refresh_value);
    if (refresh == nullptr || !refresh->refresh || refresh->client_id != client_id) {
      return oauth_error(400, "invalid_grant", "The refresh token is not valid.");
    }
    if (refresh->spent) return oauth_error(400, "invalid_grant", "The refresh token has already been used.");
    if (now >= refresh->expires_at) return oauth_error(400, "invalid_grant", "The refresh token has expired.");
    refresh->spent = true;
    const ScopeSet granted = refresh->principal.scopes;
    Principal principal = refresh->principal;
    principal.scopes = granted & (all_read_scopes() | all_write_scopes());
    return token_response(sandbox, *client, principal, granted, "", now, nullptr);
  }
  return oauth_error(400, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token.");
}

}  // namespace fulfillsync::sandbox
