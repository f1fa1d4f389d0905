// OAuth end to end: `fulfillsyncd auth login` against the sandbox's authorization server, with the
// test playing the browser; then the daemon running on the stored tokens, refreshing and rotating them.
#include <signal.h>
#include <sys/stat.h>

#include <regex>
#include <sstream>

#include <SQLiteCpp/Database.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fulfillsync/testing/http.hpp"
#include "fulfillsync/testing/process.hpp"
#include "fulfillsync/testing/sandbox.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;

std::string html_unescape(std::string text) {
  for (const auto& [entity, plain] : std::vector<std::pair<std::string, std::string>>{
           {"&quot;", "\""}, {"&#39;", "'"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}}) {
    for (std::size_t at; (at = text.find(entity)) != std::string::npos;) text.replace(at, entity.size(), plain);
  }
  return text;
}

std::string form_encode(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

// Distinctive, so that finding it in a log cannot be a coincidence.
constexpr const char* kClientSecret = "cs-7f3a9c2e5b814d06aa";

class AuthLoginTest : public ::testing::Test {
 protected:
  // Registers an OAuth app with `scopes` in the sandbox and writes a daemon configuration for it.
  void register_app(const std::string& scopes) {
    callback_port = unused_loopback_port();
    const std::string redirect = "http://127.0.0.1:" + std::to_string(callback_port) + "/callback";
    const auto added = sandbox.admin("POST", "/_sandbox/oauth-clients",
                                     R"({"client_id":"fulfillsync-test","client_secret":")" +
                                         std::string(kClientSecret) + R"(","redirect_uris":[")" +
                                         redirect + R"("],"scopes":")" + scopes + R"("})");
    ASSERT_EQ(added.status, 201) << added.body;
    write_file(dir / "client-secret", std::string(kClientSecret) + "\n");
    chmod((dir / "client-secret").c_str(), 0600);
    SQLite::Database merchant((dir / "merchant.db").string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    merchant.exec("CREATE TABLE IF NOT EXISTS shop (id INTEGER)");
    write_file(config, "checkpoint:\n"
                       "  path: " + (dir / "checkpoint.db").string() + "\n"
                       "merchant:\n"
                       "  sqlite:\n"
                       "    path: " + (dir / "merchant.db").string() + "\n"
                       "api:\n"
                       "  base_url: " + sandbox.base_url() + "\n"
                       "  allow_plain_http: true\n"
                       "  oauth:\n"
                       "    auth_url: " + sandbox.base_url() + "\n"
                       "    client_id: fulfillsync-test\n"
                       "    client_secret_file: " + (dir / "client-secret").string() + "\n"
                       "    redirect_uri: " + redirect + "\n"
                       "    scopes: [openid, offline_access, " + std::regex_replace(scopes, std::regex(" "), ", ") + "]\n"
                       "metrics:\n"
                       "  listen: 127.0.0.1:0\n");
  }

  // Runs `auth login` (with `log_level`), approving in the sandbox's authorization page as a browser
  // would. Returns everything it printed.
  std::string login(const std::string& log_level = "info") {
    ChildProcess login({.argv = {binary_path("fulfillsyncd").string(), "--config", config.string(), "--log-level",
                                 log_level, "auth", "login"}});
    const auto url_line = login.wait_for_stdout("/connect/authorize?", 20s);
    EXPECT_TRUE(url_line) << login.stdout_text() << login.stderr_text();
    if (!url_line) return {};
    const std::string url = url_line->substr(url_line->find("http"));
    const std::string target = url.substr(url.find("/connect/authorize"));

    // The authorization page answers with a form that the browser posts to the redirect URI.
    const HttpResponse page = http_get("127.0.0.1", sandbox.port(), target);
    EXPECT_EQ(page.status, 200) << page.body;
    std::string form;
    const std::regex input(R"re(name="([^"]+)" value="([^"]*)")re");
    for (std::sregex_iterator it(page.body.begin(), page.body.end(), input), end; it != end; ++it) {
      if (!form.empty()) form += '&';
      form += form_encode(html_unescape((*it)[1])) + "=" + form_encode(html_unescape((*it)[2]));
    }
    EXPECT_THAT(form, HasSubstr("code="));
    EXPECT_TRUE(login.wait_for_stdout("Waiting for the callback", 10s));
    const HttpResponse callback = http_request("127.0.0.1", callback_port, "POST", "/callback",
                                               {{"Content-Type", "application/x-www-form-urlencoded"}}, form);
    EXPECT_EQ(callback.status, 200);
    EXPECT_EQ(login.wait_for_exit(30s), 0) << login.stdout_text() << login.stderr_text();
    EXPECT_THAT(login.stdout_text(), HasSubstr("Logged in"));
    return login.stdout_text() + login.stderr_text();
  }

  std::string stored_token(const std::string& column = "refresh_token") {
    SQLite::Database db((dir / "checkpoint.db").string(), SQLite::OPEN_READONLY);
    return db.execAndGet("SELECT " + column + " FROM tokens WHERE name = 'oauth'").getString();
  }
  std::string stored_refresh_token() { return stored_token(); }

  std::unique_ptr<ChildProcess> start_daemon(const std::string& log_level = "info") {
    return std::make_unique<ChildProcess>(ChildProcess::Options{
        .argv = {binary_path("fulfillsyncd").string(), "--config", config.string(), "--log-level", log_level, "run"},
        .unset_env = {"NOTIFY_SOCKET", "JOURNAL_STREAM"}});
  }

  TempDir dir;
  std::filesystem::path config = dir / "fulfillsync.yaml";
  Sandbox sandbox;
  std::uint16_t callback_port = 0;
};

TEST_F(AuthLoginTest, LoginThenRunRefreshingAndRotatingTheStoredTokens) {
  register_app("channels_read orders_read orders_write");
  login();
  const std::string first_refresh_token = stored_refresh_token();
  ASSERT_FALSE(first_refresh_token.empty());

  {
    auto daemon = start_daemon();
    EXPECT_TRUE(daemon->wait_for_stderr("using channel", 20s)) << daemon->stderr_text();
    daemon->send_signal(SIGTERM);
    EXPECT_EQ(daemon->wait_for_exit(15s), 0);
  }

  // An hour later (simulated) the access token has expired: the daemon refreshes on the 401,
  // stores the rotated refresh token, and goes on.
  ASSERT_EQ(sandbox.admin("POST", "/_sandbox/clock/advance?seconds=3700").status, 200);
  {
    auto daemon = start_daemon();
    EXPECT_TRUE(daemon->wait_for_stderr("using channel", 20s)) << daemon->stderr_text();
    EXPECT_THAT(daemon->stderr_text(), HasSubstr("OAuth access token refreshed"));
    daemon->send_signal(SIGTERM);
    EXPECT_EQ(daemon->wait_for_exit(15s), 0);
  }
  const std::string rotated = stored_refresh_token();
  EXPECT_NE(rotated, first_refresh_token);

  // The stored, rotated token survives a restart and works without another refresh.
  auto daemon = start_daemon();
  EXPECT_TRUE(daemon->wait_for_stderr("using channel", 20s)) << daemon->stderr_text();
  EXPECT_THAT(daemon->stderr_text(), ::testing::Not(HasSubstr("refreshed")));
  EXPECT_EQ(stored_refresh_token(), rotated);
}

TEST_F(AuthLoginTest, AReadOnlyTokenIsRefusedAtStart) {
  register_app("channels_read orders_read");
  login();
  auto daemon = start_daemon();
  EXPECT_EQ(daemon->wait_for_exit(30s), 78) << daemon->stderr_text();
  EXPECT_THAT(daemon->stderr_text(), HasSubstr("has the orders_write scope"));
}

// Security: at the most verbose log level, neither the login nor a run that refreshes the access
// token prints the client secret, an access token or a refresh token (each line of both is searched).
TEST_F(AuthLoginTest, ATraceLevelLoginAndRefreshNeverPrintTheSecrets) {
  register_app("channels_read orders_read orders_write");
  std::string logs = login("trace");
  std::vector<std::string> secrets = {kClientSecret, stored_token("access_token"), stored_refresh_token()};
  ASSERT_EQ(sandbox.admin("POST", "/_sandbox/clock/advance?seconds=3700").status, 200);
  {
    auto daemon = start_daemon("trace");
    EXPECT_TRUE(daemon->wait_for_stderr("OAuth access token refreshed", 20s)) << daemon->stderr_text();
    EXPECT_TRUE(daemon->wait_for_stderr("using channel", 20s)) << daemon->stderr_text();
    daemon->send_signal(SIGTERM);
    EXPECT_EQ(daemon->wait_for_exit(15s), 0);
    logs += daemon->stdout_text() + daemon->stderr_text();
  }
  secrets.push_back(stored_token("access_token"));
  secrets.push_back(stored_refresh_token());
  EXPECT_THAT(logs, HasSubstr("GET /2026-07/channel"));  // trace level: the exchanges are there
  std::istringstream lines(logs);
  int line_number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++line_number;
    for (const std::string& secret : secrets) {
      ASSERT_FALSE(secret.empty());
      EXPECT_EQ(line.find(secret.substr(0, 16)), std::string::npos) << "line " << line_number << ": " << line;
    }
  }
}

}  // namespace
}  // namespace fulfillsync::testing
