// Personal access tokens, channels and scopes, and OAuth 2.0 with PKCE.
#include <gtest/gtest.h>

#include "sandbox_fixture.hpp"

namespace fulfillsync::sandbox_test {
namespace {

constexpr std::string_view kVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-verifier";
constexpr std::string_view kRedirect = "https://app.test/callback";

std::string decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out.push_back(static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(text[i] == '+' ? ' ' : text[i]);
    }
  }
  return out;
}

std::map<std::string, std::string> fragment_of(const HttpResponse& response) {
  std::map<std::string, std::string> fields;
  const auto location = response.headers.find("location");
  if (location == response.headers.end()) return fields;
  std::string_view rest = location->second;
  rest.remove_prefix(rest.find('#') + 1);
  while (!rest.empty()) {
    const auto end = rest.find('&');
    const auto pair = rest.substr(0, end);
    const auto equals = pair.find('=');
    fields[decode(pair.substr(0, equals))] = decode(pair.substr(equals + 1));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return fields;
}

class SandboxOAuth : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto made = sandbox.admin("POST", "/_sandbox/oauth-clients",
        R"({"client_id":"app","client_secret":"s3cret","name":"Test App","redirect_uris":["https://app.test/callback"],)"
        R"("scopes":"channels_read orders_read orders_write"})");
    ASSERT_EQ(made.status, 201) << made.body;
  }

  HttpResponse authorize(std::string extra, std::string scope = "orders_read orders_write channels_read offline_access openid",
                         std::string method = "S256") {
    std::string target = "/connect/authorize?client_id=app&response_type=code&redirect_uri=" + std::string(kRedirect) +
                         "&scope=" + scope + "&code_challenge=" + pkce_challenge(kVerifier) +
                         "&code_challenge_method=" + method + "&state=xyz-state&nonce=n-0S6&integration_name=Shop" + extra;
    for (auto& c : target) {
      if (c == ' ') c = '+';
    }
    return sandbox.raw("GET", target);
  }

  HttpResponse token(std::string form) {
    return sandbox.raw("POST", "/connect/token", {{"Content-Type", "application/x-www-form-urlencoded"}}, form);
  }

  HttpResponse exchange(const std::string& code, std::string_view verifier = kVerifier) {
    return token("grant_type=authorization_code&client_id=app&client_secret=s3cret&code=" + code +
                 "&redirect_uri=" + std::string(kRedirect) + "&code_verifier=" + std::string(verifier));
  }

  std::string code() {
    const auto response = authorize("");
    EXPECT_EQ(response.status, 302) << response.body;
    return fragment_of(response)["code"];
  }

  Sandbox sandbox;
};

TEST(SandboxAuth, MissingOrBadTokensAnswer401) {
  Sandbox sandbox;
  const auto missing = sandbox.raw("GET", "/2026-01/order");
  EXPECT_EQ(missing.status, 401);
  EXPECT_EQ(missing.headers.count("www-authenticate"), 1u);
  EXPECT_EQ(as_int(parse(missing.body)["status"]), 401);
  EXPECT_EQ(sandbox.call("GET", "/2026-01/order", {}, {}, "wrong-token").status, 401);
  EXPECT_EQ(sandbox.raw("GET", "/2026-01/order", {{"Authorization", "Basic dGVzdDp0ZXN0"}}).status, 401);
  EXPECT_EQ(sandbox.raw("GET", "/2026-01/order", {{"Authorization", "Bearer"}}).status, 401);
  EXPECT_EQ(sandbox.raw("GET", "/2026-01/order", {{"Authorization", "bearer test-token"}}).status, 200);
}

TEST(SandboxAuth, ChannelsShowThePersonalTokenChannelWithWriteScopes) {
  Sandbox sandbox;
  const auto response = sandbox.get("/2026-01/channel");
  ASSERT_EQ(response.status, 200);
  const auto items = parse(response.body)["items"];
  EXPECT_EQ(as_int(items.at(0)["id"]), kReadOnlyChannel);
  EXPECT_EQ(response.body.find("orders_write"), response.body.rfind("orders_write"));  // only one channel writes
  EXPECT_EQ(as_int(items.at(1)["id"]), kWriteChannel);
  EXPECT_NE(simdjson::minify(items.at(1)["scopes"]).find("orders_write"), std::string::npos);
  EXPECT_EQ(simdjson::minify(items.at(0)["scopes"]).find("_write"), std::string::npos);
  EXPECT_TRUE(parse(response.body)["next"].is_null());
  const auto paged = parse(sandbox.get("/2026-01/channel?RecordsPerPage=1").body);
  EXPECT_EQ(as_string(paged["next"]), "/2026-01/channel?RecordsPerPage=1&Cursor=2");
  EXPECT_EQ(sandbox.get("/2026-01/channel?RecordsPerPage=0").status, 400);
}

TEST(SandboxAuth, CreatingCallsNeedAWriteChannel) {
  Sandbox sandbox;
  const auto missing = sandbox.call("POST", "/2026-01/order", order_body("CH-1"));
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(error_fields(missing), std::vector<std::string>{"service_channel_id"});
  const auto read_only = sandbox.call("POST", "/2026-01/order", order_body("CH-1"), {{"service_channel_id", "1"}});
  EXPECT_EQ(read_only.status, 403);
  EXPECT_NE(as_string(parse(read_only.body)["detail"]).find("orders_write"), std::string::npos);
  EXPECT_EQ(sandbox.call("POST", "/2026-01/order", order_body("CH-1"), {{"service_channel_id", "999"}}).status, 403);
  EXPECT_EQ(sandbox.call("POST", "/2026-01/order", order_body("CH-1"), {{"service_channel_id", "two"}}).status, 403);
  EXPECT_EQ(sandbox.create("/2026-01/order", order_body("CH-1")).status, 201);
  // Nothing was created by the refused attempts.
  EXPECT_EQ(parse(sandbox.get("/2026-01/order").body).get_array().size(), 1u);
}

TEST(SandboxAuth, AnotherMerchantsTokenSeesNoneOfOurOrders) {
  Sandbox sandbox;
  ASSERT_EQ(sandbox.admin("POST", "/_sandbox/tokens", R"({"token":"other","merchant_id":2})").status, 201);
  const auto id = std::to_string(as_int(sandbox.create_order("PRIVATE")["id"]));
  EXPECT_EQ(sandbox.call("GET", "/2026-01/order/" + id, {}, {}, "other").status, 404);
  EXPECT_EQ(parse(sandbox.call("GET", "/2026-01/order", {}, {}, "other").body).get_array().size(), 0u);
  EXPECT_EQ(sandbox.call("POST", "/2026-01/order/" + id + ":cancel", {}, {}, "other").status, 404);
  // Reference ids are unique per merchant, not globally.
  EXPECT_EQ(sandbox.call("POST", "/2026-01/order", order_body("PRIVATE"), {{"service_channel_id", "4"}}, "other").status, 201);
  // Our channel is not theirs.
  EXPECT_EQ(sandbox.call("POST", "/2026-01/order", order_body("X"), {{"service_channel_id", "2"}}, "other").status, 403);
}

TEST_F(SandboxOAuth, AuthorizationCodeWithTheRightVerifierYieldsTokens) {
  const auto response = authorize("");
  ASSERT_EQ(response.status, 302) << response.body;
  auto fields = fragment_of(response);
  EXPECT_EQ(response.headers.at("location").rfind(std::string(kRedirect) + "#", 0), 0u);
  EXPECT_EQ(fields["state"], "xyz-state");
  EXPECT_FALSE(fields["code"].empty());
  EXPECT_FALSE(fields["session_state"].empty());
  EXPECT_FALSE(fields["id_token"].empty());
  EXPECT_NE(fields["scope"].find("orders_write"), std::string::npos);

  const auto tokens = exchange(fields["code"]);
  ASSERT_EQ(tokens.status, 200) << tokens.body;
  const auto body = parse(tokens.body);
  EXPECT_EQ(as_int(body["expires_in"]), 3600);
  EXPECT_EQ(as_string(body["token_type"]), "bearer");
  EXPECT_FALSE(as_string(body["refresh_token"]).empty());
  const std::string id_token = as_string(body["id_token"]);
  EXPECT_EQ(std::count(id_token.begin(), id_token.end(), '.'), 2);
  const std::string access = as_string(body["access_token"]);

  // The installed app has its own channel with the granted write scope.
  const auto channels = sandbox.call("GET", "/2026-01/channel", {}, {}, access);
  ASSERT_EQ(channels.status, 200) << channels.body;
  const auto channel = parse(channels.body)["items"].at(0);
  EXPECT_EQ(as_string(channel["name"]), "Shop");
  EXPECT_EQ(as_string(channel["application_name"]), "Test App");
  const auto order = sandbox.call("POST", "/2026-01/order", order_body("OAUTH-1"),
                                  {{"service_channel_id", std::to_string(as_int(channel["id"]))}}, access);
  EXPECT_EQ(order.status, 201) << order.body;
  // A scope the app was not granted is refused with 403.
  EXPECT_EQ(sandbox.call("GET", "/2026-01/return", {}, {}, access).status, 403);
}

TEST_F(SandboxOAuth, WrongVerifierIsRefused) {
  const auto refused = exchange(code(), "a-completely-different-verifier-of-enough-length-0123456789");
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(as_string(parse(refused.body)["error"]), "invalid_grant");
  const auto malformed = exchange(code(), "short");
  EXPECT_EQ(malformed.status, 400);
}

TEST_F(SandboxOAuth, PlainChallengeMethodIsRefused) {
  const auto response = authorize("", "orders_read", "plain");
  ASSERT_EQ(response.status, 302);
  auto fields = fragment_of(response);
  EXPECT_EQ(fields["error"], "invalid_request");
  EXPECT_NE(fields["error_description"].find("plain"), std::string::npos);
  EXPECT_EQ(fields["state"], "xyz-state");
  EXPECT_EQ(fields.count("code"), 0u);
}

TEST_F(SandboxOAuth, ACodeWorksOnceAndItsReuseRevokesWhatItGave) {
  const std::string value = code();
  const auto first = exchange(value);
  ASSERT_EQ(first.status, 200);
  const std::string access = as_string(parse(first.body)["access_token"]);
  EXPECT_EQ(sandbox.call("GET", "/2026-01/order", {}, {}, access).status, 200);
  const auto again = exchange(value);
  EXPECT_EQ(again.status, 400);
  EXPECT_EQ(as_string(parse(again.body)["error"]), "invalid_grant");
  EXPECT_EQ(sandbox.call("GET", "/2026-01/order", {}, {}, access).status, 401);
}

TEST_F(SandboxOAuth, RefreshRotatesAndASpentRefreshTokenIsRefused) {
  const auto tokens = parse(exchange(code()).body);
  const std::string refresh = as_string(tokens["refresh_token"]);
  const auto refreshed = token("grant_type=refresh_token&client_id=app&client_secret=s3cret&refresh_token=" + refresh);
  ASSERT_EQ(refreshed.status, 200) << refreshed.body;
  const auto body = parse(refreshed.body);
  const std::string rotated = as_string(body["refresh_token"]);
  EXPECT_NE(rotated, refresh);
  EXPECT_NE(as_string(body["access_token"]), as_string(tokens["access_token"]));
  EXPECT_EQ(sandbox.call("GET", "/2026-01/order", {}, {}, as_string(body["access_token"])).status, 200);
  const auto reused = token("grant_type=refresh_token&client_id=app&client_secret=s3cret&refresh_token=" + refresh);
  EXPECT_EQ(reused.status, 400);
  EXPECT_EQ(as_string(parse(reused.body)["error"]), "invalid_grant");
  EXPECT_EQ(token("grant_type=refresh_token&client_id=app&client_secret=s3cret&refresh_token=" + rotated).status, 200);
  // A refresh token is not an access token.
  EXPECT_EQ(sandbox.call("GET", "/2026-01/order", {}, {}, rotated).status, 401);
}

TEST_F(SandboxOAuth, WithoutOfflineAccessThereIsNoRefreshToken) {
  const auto response = authorize("", "orders_read");
  const auto tokens = exchange(fragment_of(response)["code"]);
  ASSERT_EQ(tokens.status, 200);
  simdjson::dom::element refresh;
  EXPECT_NE(parse(tokens.body)["refresh_token"].get(refresh), simdjson::SUCCESS);
}

TEST_F(SandboxOAuth, AccessTokensExpireAfterAnHourOfSimulatedTime) {
  const std::string access = as_string(parse(exchange(code()).body)["access_token"]);
  sandbox.advance_clock(3500);
  EXPECT_EQ(sandbox.call("GET", "/2026-01/order", {}, {}, access).status, 200);
  sandbox.advance_clock(101);
  const auto expired = sandbox.call("GET", "/2026-01/order", {}, {}, access);
  EXPECT_EQ(expired.status, 401);
  EXPECT_NE(as_string(parse(expired.body)["detail"]).find("expired"), std::string::npos);
}

TEST_F(SandboxOAuth, AuthorizeChecksClientRedirectAndResponseType) {
  EXPECT_EQ(sandbox.raw("GET", "/connect/authorize?client_id=nobody&response_type=code&redirect_uri=https://app.test/callback").status, 400);
  const auto bad_redirect = sandbox.raw("GET", "/connect/authorize?client_id=app&response_type=code&redirect_uri=https://evil.test/cb");
  EXPECT_EQ(bad_redirect.status, 400);
  EXPECT_EQ(bad_redirect.headers.count("location"), 0u);
  const auto token_type = authorize("&response_type=token");
  // The later response_type wins in our query reader only if first; ours sends code first, so build by hand.
  const auto implicit = sandbox.raw("GET", "/connect/authorize?client_id=app&response_type=token&redirect_uri=https://app.test/callback&scope=orders_read&code_challenge=" +
                                               pkce_challenge(kVerifier) + "&code_challenge_method=S256&state=s1");
  EXPECT_EQ(fragment_of(implicit)["error"], "unsupported_response_type");
  EXPECT_EQ(fragment_of(implicit)["state"], "s1");
  const auto bad_scope = authorize("", "returns_write");
  EXPECT_EQ(fragment_of(bad_scope)["error"], "invalid_scope");
  (void)token_type;
}

TEST_F(SandboxOAuth, FormPostDeliversTheCodeInAnAutoSubmittedForm) {
  const auto response = authorize("&response_mode=form_post");
  ASSERT_EQ(response.status, 200);
  EXPECT_NE(response.headers.at("content-type").find("text/html"), std::string::npos);
  EXPECT_NE(response.body.find(R"(action="https://app.test/callback")"), std::string::npos);
  EXPECT_NE(response.body.find(R"(name="code")"), std::string::npos);
  EXPECT_NE(response.body.find(R"(name="state" value="xyz-state")"), std::string::npos);
  EXPECT_NE(response.body.find(R"(name="id_token")"), std::string::npos);
}

TEST_F(SandboxOAuth, TokenEndpointChecksTheClientSecretAndGrant) {
  const std::string value = code();
  const auto wrong_secret = token("grant_type=authorization_code&client_id=app&client_secret=nope&code=" + value +
                                  "&redirect_uri=" + std::string(kRedirect) + "&code_verifier=" + std::string(kVerifier));
  EXPECT_EQ(wrong_secret.status, 401);
  EXPECT_EQ(as_string(parse(wrong_secret.body)["error"]), "invalid_client");
  const auto no_secret = token("grant_type=authorization_code&client_id=app&code=" + value + "&redirect_uri=" +
                               std::string(kRedirect) + "&code_verifier=" + std::string(kVerifier));
  EXPECT_EQ(no_secret.status, 401);
  const auto wrong_redirect = token("grant_type=authorization_code&client_id=app&client_secret=s3cret&code=" + value +
                                    "&redirect_uri=https://app.test/other&code_verifier=" + std::string(kVerifier));
  EXPECT_EQ(as_string(parse(wrong_redirect.body)["error"]), "invalid_grant");
  EXPECT_EQ(as_string(parse(token("grant_type=password&client_id=app&client_secret=s3cret").body)["error"]),
            "unsupported_grant_type");
  EXPECT_EQ(sandbox.raw("POST", "/connect/token", {{"Content-Type", "application/json"}}, "{}").status, 400);
  // The code survived the failed attempts (they never reached the verifier check).
  EXPECT_EQ(exchange(value).status, 200);
}

}  // namespace
}  // namespace fulfillsync::sandbox_test
