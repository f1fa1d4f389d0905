// A real Prometheus (Debian's `prometheus`) scrapes a running daemon, with the sandbox and a
// merchant database, and evaluates the alert rules of monitoring/ as shipped (their `for:` cut to
// nothing, so that the test need not wait minutes). The scrape config is monitoring/README.md's,
// with Prometheus' default settings: the rules must work without honor_labels.
#include <crypt.h>

#include <regex>

#include "sync_fixture.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::HasSubstr;

std::string url_encoded(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    }
  }
  return out;
}

class PrometheusTest : public SyncFixture {
 protected:
  // Waits until `done` holds for the body of GET `target` on Prometheus; returns the last body.
  template <typename Done>
  std::string wait_for(std::uint16_t port, const std::string& target, Done done, std::chrono::seconds timeout = 60s) {
    std::string body;
    for (const auto deadline = std::chrono::steady_clock::now() + timeout; std::chrono::steady_clock::now() < deadline;
         std::this_thread::sleep_for(250ms)) {
      try {
        const auto response = http_get("127.0.0.1", port, target);
        body = response.body;
        if (response.status == 200 && done(body)) return body;
      } catch (const std::exception&) {
        // not listening yet
      }
    }
    ADD_FAILURE() << "Prometheus never answered " << target << " as expected; last: " << body;
    return body;
  }

  // An instant query that returns at least one series.
  std::string wait_for_series(std::uint16_t port, std::string_view query) {
    return wait_for(port, "/api/v1/query?query=" + url_encoded(query),
                    [](const std::string& body) { return body.find("\"result\":[{") != std::string::npos; });
  }

  // Prometheus scraping the daemon on `metrics_port` with monitoring/'s rules (their `for:` cut to
  // nothing), ready; `port` is its own.
  std::unique_ptr<ChildProcess> start_prometheus(std::uint16_t metrics_port, std::uint16_t& port) {
    const std::string rules =
        std::regex_replace(read_file(source_path("monitoring/fulfillsync-alerts.yml")), std::regex("for: \\S+"),
                           "for: 0s");
    write_file(dir / "rules.yml", rules);
    write_file(dir / "prometheus.yml", "global:\n"
                                       "  scrape_interval: 1s\n"
                                       "  evaluation_interval: 1s\n"
                                       "rule_files:\n"
                                       "  - " + (dir / "rules.yml").string() + "\n"
                                       "scrape_configs:\n"
                                       "  - job_name: fulfillsync\n"
                                       "    static_configs:\n"
                                       "      - targets: ['127.0.0.1:" + std::to_string(metrics_port) + "']\n");
    port = unused_loopback_port();
    if (port == 0) return nullptr;
    // Debian's package puts it there (scripts/bootstrap installs it).
    auto prometheus = std::make_unique<ChildProcess>(ChildProcess::Options{
        .argv = {"/usr/bin/prometheus", "--config.file=" + (dir / "prometheus.yml").string(),
                 "--storage.tsdb.path=" + (dir / "prometheus-data").string(),
                 fmt::format("--web.listen-address=127.0.0.1:{}", port), "--log.level=warn"}});
    wait_for(port, "/-/ready", [](const std::string&) { return true; });
    if (HasFailure()) ADD_FAILURE() << prometheus->stderr_text();
    return prometheus;
  }

  // Waits until /api/v1/alerts has `alertname` firing; returns the body.
  std::string wait_for_firing(std::uint16_t port, const std::string& alertname) {
    return wait_for(port, "/api/v1/alerts", [&](const std::string& body) {
      return body.find(R"("alertname":")" + alertname + "\"") != std::string::npos &&
             body.find(R"("state":"firing")") != std::string::npos;
    });
  }
};

TEST_F(PrometheusTest, ScrapesTheDaemonEvaluatesTheRulesAndFiresTheAuthenticationAlert) {
  ASSERT_NO_FATAL_FAILURE(start_sandbox_with_revocable_token_and_metrics());
  insert_orders("PROM", 3);
  std::uint16_t metrics_port = 0;
  const auto running = start_daemon(metrics_port);
  ChildProcess& daemon_run = *running;
  ASSERT_NE(metrics_port, 0) << daemon_run.stderr_text();

  std::uint16_t port = 0;
  const auto prometheus_run = start_prometheus(metrics_port, port);
  ASSERT_NE(port, 0);
  ASSERT_FALSE(HasFailure());
  ChildProcess& prometheus = *prometheus_run;

  // It scrapes the daemon, and the pushes show.
  wait_for_series(port, R"(up{job="fulfillsync"} == 1)");
  wait_for_series(port,
                  R"(fulfillsync_sync_items_total{job="fulfillsync",sync_job="push_orders",outcome="created"} >= 3)");
  wait_for_series(port, R"(fulfillsync_job_last_success_timestamp_seconds{sync_job="pull_shipments"} > 0)");
  // No label of the daemon's clashes with the ones Prometheus sets on the target.
  const std::string clashes =
      http_get("127.0.0.1", port, "/api/v1/query?query=" + url_encoded(R"(count({exported_job!=""}))")).body;
  EXPECT_THAT(clashes, HasSubstr(R"("result":[])"));
  // Every rule loads and evaluates.
  const std::string loaded = wait_for(port, "/api/v1/rules", [](const std::string& body) {
    return body.find("FulfillsyncTrackingMarksFailing") != std::string::npos;
  });
  EXPECT_EQ(loaded.find("\"health\":\"err\""), std::string::npos) << loaded;
  EXPECT_EQ(http_get("127.0.0.1", port, "/api/v1/alerts").body.find("FulfillsyncAuthenticationFailing"),
            std::string::npos);
  // Every job has run and every family has series by now: promtool accepts all of it.
  write_file(dir / "metrics.txt", http_get("127.0.0.1", metrics_port, "/metrics").body);
  const auto lint = run({"/bin/sh", "-c", "promtool check metrics < " + (dir / "metrics.txt").string()}, 60s);
  EXPECT_EQ(lint.exit_status, 0) << lint.stdout_text << lint.stderr_text;
  EXPECT_THAT(read_file(dir / "metrics.txt"), HasSubstr("fulfillsync_pull_lag_seconds{sync_job=\"pull_shipments\"}"));

  // The provider revokes the token: the next push is refused, the job pauses, the alert fires.
  ASSERT_EQ(sandbox->admin("POST", "/_sandbox/reset").status, 200);
  insert_order("PROM-0004", 4);
  ASSERT_TRUE(daemon_run.wait_for_stderr("push_orders: paused", 20s)) << daemon_run.stderr_text();
  const std::string alerts = wait_for_firing(port, "FulfillsyncAuthenticationFailing");
  EXPECT_THAT(alerts, HasSubstr(R"("sync_job":"push_orders")"));

  prometheus.send_signal(SIGTERM);
  EXPECT_TRUE(prometheus.wait_for_exit(30s).has_value());
  daemon_run.send_signal(SIGTERM);
  EXPECT_EQ(daemon_run.wait_for_exit(30s), 0) << daemon_run.stderr_text();
}

// A certificate authority, a server certificate for 127.0.0.1 and a client certificate it signed, and
// a client certificate it did not sign, made by the openssl tool in `dir`. False when it cannot.
bool make_certificates(const std::filesystem::path& dir) {
  const std::string script = R"(set -e
cd ")" + dir.string() + R"("
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$1"; }
key ca.key
openssl req -x509 -new -key ca.key -out ca.crt -days 2 -subj /CN=fulfillsync-test-ca
signed() {  # name CN [extension file]
  key "$1.key"
  openssl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$2"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out "$1.crt" ${3:+-extfile "$3"}
}
printf 'subjectAltName=IP:127.0.0.1\n' > server.ext
signed server first-server server.ext
signed renewed renewed-server server.ext
signed client prometheus
key stranger.key
openssl req -x509 -new -key stranger.key -out stranger.crt -days 2 -subj /CN=stranger
)";
  return run({"/bin/sh", "-c", script}, 60s).exit_status == 0;
}

std::string bcrypt(const std::string& password) {
  const char* salt = crypt_gensalt_ra("$2b$", 5, nullptr, 0);
  crypt_data data{};
  const std::string hash = crypt_r(password.c_str(), salt, &data);
  std::free(const_cast<char*>(salt));
  return hash;
}

// Beyond loopback the endpoint is meant to run with TLS and basic auth: Prometheus scrapes it so, as
// the README's scrape_config says, and a wrong password or a client certificate from another
// authority is refused. SIGHUP puts a renewed server certificate in use.
TEST_F(PrometheusTest, ScrapesOverTlsWithBasicAuthAndRefusesWrongCredentials) {
  ASSERT_TRUE(make_certificates(dir.path()));
  ASSERT_NO_FATAL_FAILURE(start_sandbox_with_revocable_token_and_metrics());
  const auto file = [&](const char* name) { return (dir / name).string(); };
  std::filesystem::copy_file(file("server.crt"), file("tls.crt"));
  std::filesystem::copy_file(file("server.key"), file("tls.key"));
  write_file(config_path, read_file(config_path) + "  tls_server_config:\n"
                                                   "    cert_file: " + file("tls.crt") + "\n"
                                                   "    key_file: " + file("tls.key") + "\n"
                                                   "    client_ca_file: " + file("ca.crt") + "\n"
                                                   "    min_version: TLS12\n"
                                                   "  basic_auth_users:\n"
                                                   "    prometheus: " + bcrypt("scrape-secret") + "\n");
  const RunResult checked = daemon({"check-config"});
  EXPECT_EQ(checked.exit_status, 0) << checked.stdout_text;
  EXPECT_THAT(checked.stdout_text, HasSubstr("OK    metrics.tls_server_config: the certificate and key load"));
  std::uint16_t metrics_port = 0;
  const auto running = start_daemon(metrics_port);
  ASSERT_NE(metrics_port, 0) << running->stderr_text();
  EXPECT_ANY_THROW(http_get("127.0.0.1", metrics_port, "/metrics")) << "plain HTTP is not answered";

  const auto job = [&](const char* name, const char* password, const char* client) {
    return fmt::format("  - job_name: {}\n"
                       "    scheme: https\n"
                       "    tls_config:\n"
                       "      ca_file: {}\n"
                       "      cert_file: {}.crt\n"
                       "      key_file: {}.key\n"
                       "    basic_auth:\n"
                       "      username: prometheus\n"
                       "      password: {}\n"
                       "    static_configs:\n"
                       "      - targets: ['127.0.0.1:{}']\n",
                       name, file("ca.crt"), file(client), file(client), password, metrics_port);
  };
  write_file(dir / "prometheus.yml", "global:\n  scrape_interval: 1s\nscrape_configs:\n" +
                                         job("fulfillsync", "scrape-secret", "client") +
                                         job("wrong_password", "guess", "client") +
                                         job("wrong_certificate", "scrape-secret", "stranger"));
  const std::uint16_t port = unused_loopback_port();
  ASSERT_NE(port, 0);
  ChildProcess prometheus(ChildProcess::Options{
      .argv = {"/usr/bin/prometheus", "--config.file=" + file("prometheus.yml"),
               "--storage.tsdb.path=" + file("prometheus-data"), fmt::format("--web.listen-address=127.0.0.1:{}", port),
               "--log.level=warn"}});

  wait_for_series(port, R"(up{job="fulfillsync"} == 1)");
  wait_for_series(port, R"(up{job="wrong_password"} == 0)");
  wait_for_series(port, R"(up{job="wrong_certificate"} == 0)");
  // Refused for the reason meant: a 401 for the password, the handshake for the certificate.
  wait_for_series(port, R"(fulfillsync_http_requests_total{job="fulfillsync",path="/metrics",code="401"} > 0)");
  wait_for_series(port, R"(fulfillsync_http_connections_dropped_total{job="fulfillsync",reason="tls"} > 0)");

  // A renewed certificate is taken on SIGHUP.
  const auto served_subject = [&] {
    return run({"/bin/sh", "-c",
                fmt::format("openssl s_client -connect 127.0.0.1:{} -CAfile {} -cert {} -key {} </dev/null "
                            "2>/dev/null | openssl x509 -noout -subject",
                            metrics_port, file("ca.crt"), file("client.crt"), file("client.key"))},
               30s)
        .stdout_text;
  };
  EXPECT_THAT(served_subject(), HasSubstr("first-server"));
  // A key that does not belong to the certificate: check-config says so, and a reload keeps the old pair.
  std::filesystem::copy_file(file("client.key"), file("tls.key"), std::filesystem::copy_options::overwrite_existing);
  const RunResult mismatched = daemon({"check-config"});
  EXPECT_EQ(mismatched.exit_status, 78) << mismatched.stdout_text;
  EXPECT_THAT(mismatched.stdout_text, HasSubstr("ERROR metrics.tls_server_config: metrics.tls_server_config ("));
  running->send_signal(SIGHUP);
  ASSERT_TRUE(running->wait_for_stderr("the endpoint keeps the certificate it had", 20s)) << running->stderr_text();
  EXPECT_THAT(served_subject(), HasSubstr("first-server"));
  std::filesystem::copy_file(file("renewed.crt"), file("tls.crt"), std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(file("renewed.key"), file("tls.key"), std::filesystem::copy_options::overwrite_existing);
  running->send_signal(SIGHUP);
  const auto reloads = [&] {
    const std::string text = running->stderr_text();
    int count = 0;
    for (auto at = text.find("configuration reloaded"); at != std::string::npos;
         at = text.find("configuration reloaded", at + 1)) {
      ++count;
    }
    return count;
  };
  for (const auto deadline = std::chrono::steady_clock::now() + 20s;
       reloads() < 2 && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(reloads(), 2) << running->stderr_text();
  EXPECT_THAT(served_subject(), HasSubstr("renewed-server"));
  wait_for_series(port, R"(up{job="fulfillsync"} == 1)");

  prometheus.send_signal(SIGTERM);
  EXPECT_TRUE(prometheus.wait_for_exit(30s).has_value());
  running->send_signal(SIGTERM);
  EXPECT_EQ(running->wait_for_exit(30s), 0) << running->stderr_text();
}

// A daemon that cannot reach the provider from the start: every job's series are there (last
// success 0: never), and the unreachable alert fires.
TEST_F(PrometheusTest, FiresTheUnreachableAlertForADaemonThatNeverReachedTheProvider) {
  ASSERT_NO_FATAL_FAILURE(start_sandbox_with_revocable_token_and_metrics());
  std::string config = read_file(config_path);
  config.replace(config.find(sandbox->base_url()), sandbox->base_url().size(),
                 fmt::format("http://127.0.0.1:{}", unused_loopback_port()));
  write_file(config_path, config);
  std::uint16_t metrics_port = 0;
  const auto running = start_daemon(metrics_port);
  ASSERT_NE(metrics_port, 0) << running->stderr_text();
  std::uint16_t port = 0;
  const auto prometheus = start_prometheus(metrics_port, port);
  ASSERT_NE(port, 0);
  ASSERT_FALSE(HasFailure());

  wait_for_series(port, R"(fulfillsync_provider_reachable{job="fulfillsync"} == 0)");
  wait_for_series(port, R"(fulfillsync_job_last_success_timestamp_seconds{job="fulfillsync",sync_job="push_orders"} == 0)");
  wait_for_series(port, R"(fulfillsync_job_runs_total{job="fulfillsync",sync_job="pull_shipments",result="error"} == 0)");
  const std::string alerts = wait_for_firing(port, "FulfillsyncProviderUnreachable");
  EXPECT_THAT(alerts, HasSubstr(R"("severity":"critical")"));

  prometheus->send_signal(SIGTERM);
  EXPECT_TRUE(prometheus->wait_for_exit(30s).has_value());
  running->send_signal(SIGTERM);
  EXPECT_EQ(running->wait_for_exit(30s), 0) << running->stderr_text();
}

}  // namespace
}  // namespace fulfillsync::testing

