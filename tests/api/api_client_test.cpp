// The API client against the real sandbox binary: channels, outcomes under injected faults, paging.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <future>

#include "fulfillsync/api/channel_selection.hpp"
#include "fulfillsync/api/client.hpp"
#include "fulfillsync/api/models/decode.hpp"
#include "fulfillsync/api/pager.hpp"
#include "fulfillsync/testing/sandbox.hpp"

namespace fulfillsync::api {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using testing::Sandbox;

std::string order_body(std::string_view reference) {
  return std::string(R"({"reference_id":")") + std::string(reference) +
         R"(","shipping_method":"Standard","products":[{"reference_id":"DEMO-TSHIRT-M","name":"T-shirt","quantity":1}],)"
         R"("recipient":{"name":"Ada Lovelace","email":"ada@example.com","address":{"address1":"1 Main St",)"
         R"("city":"Springfield","state":"IL","zip_code":"62701","country":"US"}}})";
}

class ApiClientTest : public ::testing::Test {
 protected:
  // A client of `sandbox` with retries that do not make the tests wait.
  void connect(const Sandbox& sandbox, std::string token = Sandbox::kToken) {
    connect_to(sandbox.base_url(), std::move(token));
  }

  void connect_to(const std::string& base_url, std::string token,
                  std::optional<std::filesystem::path> ca_file = std::nullopt) {
    testing::write_file(dir / "token", token + "\n");
    TransportOptions options{*parse_base_url(base_url), std::move(ca_file)};
    options.connect_timeout = 2s;
    options.request_timeout = 5s;
    transport = std::make_unique<Transport>(io.get_executor(), options);
    tokens = std::make_unique<PersonalAccessToken>(dir / "token");
    metrics = std::make_unique<ApiMetrics>(registry);
    client = std::make_unique<ApiClient>(io.get_executor(), *transport, *tokens, *metrics,
                                         ClientOptions{"2026-07", 100'000, RetryPolicy{1ms, 5ms, 3}});
  }

  template <typename T>
  T run(asio::awaitable<T> work) {
    std::promise<T> result;
    asio::co_spawn(io, std::move(work), [&](std::exception_ptr error, T value) {
      if (error) result.set_exception(error);
      else result.set_value(std::move(value));
    });
    io.restart();
    io.run();
    return result.get_future().get();
  }

  Outcome call(ApiRequest request) { return run(client->call(std::move(request))); }

  Outcome create_order(std::string_view reference) {
    ApiRequest request{"POST", "/order", "/order", {}, order_body(reference), Priority::push, false, true};
    return call(std::move(request));
  }

  // The value of a counter or gauge sample in the registry's text exposition.
  std::string exposition() { return prometheus::TextSerializer().Serialize(registry.Collect()); }

  testing::TempDir dir;
  asio::io_context io;
  prometheus::Registry registry;
  std::unique_ptr<Transport> transport;
  std::unique_ptr<PersonalAccessToken> tokens;
  std::unique_ptr<ApiMetrics> metrics;
  std::unique_ptr<ApiClient> client;
};

TEST_F(ApiClientTest, SelectsTheChannelWithWriteScopes) {
  Sandbox sandbox;
  connect(sandbox);
  const ChannelSelection selection = run(select_channel(*client, std::nullopt));
  ASSERT_EQ(selection.status, ChannelSelection::Status::selected) << selection.message;
  EXPECT_EQ(client->channel(), selection.channel_id);

  // A configured channel is checked rather than trusted.
  EXPECT_EQ(run(select_channel(*client, selection.channel_id)).status, ChannelSelection::Status::selected);
  const ChannelSelection unknown = run(select_channel(*client, 987654));
  EXPECT_EQ(unknown.status, ChannelSelection::Status::configured_not_found);
  EXPECT_THAT(unknown.message, HasSubstr("987654"));
}

TEST_F(ApiClientTest, AWrongTokenIsAnAuthenticationFailureNotARetryLoop) {
  Sandbox sandbox;
  connect(sandbox, "not-a-token");
  const ChannelSelection selection = run(select_channel(*client, std::nullopt));
  EXPECT_EQ(selection.status, ChannelSelection::Status::authentication_failed);
  EXPECT_FALSE(selection.transient());
}

TEST_F(ApiClientTest, CreatesRejectionsAndDuplicatesAreTold) {
  Sandbox sandbox;
  connect(sandbox);
  ASSERT_EQ(run(select_channel(*client, std::nullopt)).status, ChannelSelection::Status::selected);

  const Outcome created = create_order("REF-1");
  ASSERT_EQ(created.kind, OutcomeKind::success) << created.detail;
  EXPECT_EQ(created.status, 201);

  const Outcome duplicate = create_order("REF-1");
  EXPECT_EQ(duplicate.kind, OutcomeKind::duplicate_reference) << duplicate.detail;
  EXPECT_EQ(duplicate.status, 422);

  ApiRequest invalid{"POST", "/order", "/order", {}, R"({"reference_id":"REF-2","products":[]})", Priority::push,
                     false, true};
  const Outcome rejected = call(std::move(invalid));
  EXPECT_EQ(rejected.kind, OutcomeKind::rejected) << rejected.detail;
  EXPECT_FALSE(rejected.error.field_errors.empty()) << rejected.detail;
}

TEST_F(ApiClientTest, ServerErrorsAreRetriedForReadsButNotForCreates) {
  Sandbox sandbox({"--faults", "route=GET /*/order;500=1 | route=POST /*/order;503=1"});
  connect(sandbox);
  ASSERT_EQ(run(select_channel(*client, std::nullopt)).status, ChannelSelection::Status::selected);

  const Outcome read = call(ApiRequest{"GET", "/order", "/order", {{"Limit", "1"}}});
  EXPECT_EQ(read.kind, OutcomeKind::ambiguous);
  EXPECT_EQ(read.status, 500);
  EXPECT_THAT(exposition(), HasSubstr(R"(fulfillsync_api_retries_total{route="/order"} 2)"));

  const Outcome create = create_order("REF-503");
  EXPECT_EQ(create.kind, OutcomeKind::ambiguous);
  EXPECT_THAT(exposition(),
              HasSubstr(R"(fulfillsync_api_requests_total{method="POST",route="/order",status_class="5xx"} 1)"));
}

TEST_F(ApiClientTest, AConnectionDroppedAfterProcessingIsAmbiguousAndTheOrderExists) {
  Sandbox sandbox({"--faults", "route=POST /*/order;drop_after=1"});
  connect(sandbox);
  ASSERT_EQ(run(select_channel(*client, std::nullopt)).status, ChannelSelection::Status::selected);

  const Outcome create = create_order("REF-LOST");
  EXPECT_EQ(create.kind, OutcomeKind::ambiguous) << create.detail;
  EXPECT_EQ(create.status, 0);

  // Reconciliation finds it: the request was processed although no answer came.
  const Outcome found = call(ApiRequest{"GET", "/order", "/order", {{"ReferenceIds", "REF-LOST"}}});
  ASSERT_EQ(found.kind, OutcomeKind::success);
  auto page = decode<OrderPage>(found.response.body, ApiVersion::v2026_07);
  ASSERT_TRUE(page) << page.error().to_string();
  ASSERT_EQ(page->size(), 1u);
}

TEST_F(ApiClientTest, AConnectionDroppedBeforeProcessingIsAmbiguousToo) {
  // The client cannot tell this from a drop after processing: both must be reconciled.
  Sandbox sandbox({"--faults", "route=POST /*/order;drop_before=1"});
  connect(sandbox);
  ASSERT_EQ(run(select_channel(*client, std::nullopt)).status, ChannelSelection::Status::selected);
  EXPECT_EQ(create_order("REF-DROPPED").kind, OutcomeKind::ambiguous);
  const Outcome found = call(ApiRequest{"GET", "/order", "/order", {{"ReferenceIds", "REF-DROPPED"}}});
  auto page = decode<OrderPage>(found.response.body, ApiVersion::v2026_07);
  ASSERT_TRUE(page) << page.error().to_string();
  EXPECT_TRUE(page->empty());
}

TEST_F(ApiClientTest, CreatingOnAReadOnlyChannelIsForbidden) {
  Sandbox sandbox;
  connect(sandbox);
  const Outcome listed = call(ApiRequest{"GET", "/channel", "/channel"});
  auto channels = decode<ChannelList>(listed.response.body, ApiVersion::v2026_07);
  ASSERT_TRUE(channels) << channels.error().to_string();
  const auto read_only = std::find_if(channels->items.begin(), channels->items.end(),
                                      [](const Channel& channel) { return !channel.has_scope("orders_write"); });
  ASSERT_NE(read_only, channels->items.end());
  client->set_channel(static_cast<std::int32_t>(read_only->id));
  const Outcome outcome = create_order("REF-RO");
  EXPECT_EQ(outcome.kind, OutcomeKind::forbidden) << outcome.detail;
  EXPECT_EQ(outcome.status, 403);
}

TEST_F(ApiClientTest, TheBudgetLearnsTheProvidersCountAndIsNeverThrottled) {
  Sandbox sandbox({"--rate-limit", "5"});
  connect(sandbox);  // the client thinks it may send 100000 a minute
  for (int i = 0; i < 5; ++i) {
    const Outcome outcome = call(ApiRequest{"GET", "/channel", "/channel"});
    ASSERT_EQ(outcome.kind, OutcomeKind::success) << outcome.detail;
  }
  // x-remaining-calls said the window is used up: the next request would wait, not be sent.
  EXPECT_EQ(client->budget().available(), 0);
  EXPECT_THAT(exposition(), HasSubstr("fulfillsync_api_rate_budget_remaining 0"));
  EXPECT_THAT(exposition(), HasSubstr("fulfillsync_api_throttled_total 0"));
}

TEST_F(ApiClientTest, ThrottlesAreWaitedOutAsTheProviderAsks) {
  // Every other request is refused with 429 and x-retry-after: 1 (seeded, so the run repeats).
  Sandbox sandbox({"--faults", "route=GET /*/channel;429=0.5;retry_after_s=1", "--fault-seed", "3"});
  connect(sandbox);
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i) {
    const Outcome outcome = call(ApiRequest{"GET", "/channel", "/channel"});
    ASSERT_EQ(outcome.kind, OutcomeKind::success) << outcome.detail;  // throttles are not failures
  }
  const std::string text = exposition();
  const std::string sample = "\nfulfillsync_api_throttled_total ";
  const auto at = text.find(sample);
  ASSERT_NE(at, std::string::npos);
  const int throttles = std::stoi(text.substr(at + sample.size()));
  ASSERT_GT(throttles, 0) << "the seed produced no 429; pick another";
  // Each 429 held every request for the second it asked for (a lower bound, never an upper one).
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::seconds(throttles));
  EXPECT_THAT(text, HasSubstr(R"(fulfillsync_api_calls_total{outcome="success",route="/channel"} 4)"));
}

TEST_F(ApiClientTest, NothingListeningIsNotSent) {
  connect_to("http://127.0.0.1:1", Sandbox::kToken);
  const Outcome outcome = call(ApiRequest{"GET", "/channel", "/channel"});
  EXPECT_EQ(outcome.kind, OutcomeKind::not_sent);
  EXPECT_THAT(outcome.detail, HasSubstr("connect 127.0.0.1:1"));
}

TEST_F(ApiClientTest, PagesOfOrdersAreWalkedToTheEnd) {
  Sandbox sandbox;
  connect(sandbox);
  ASSERT_EQ(run(select_channel(*client, std::nullopt)).status, ChannelSelection::Status::selected);
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(create_order("PAGE-" + std::to_string(i)).ok());

  PageNumberPager pager(*client, ApiRequest{"GET", "/order", "/order"}, 3);
  std::vector<std::string> references;
  int pages = 0;
  while (auto outcome = run(pager.next())) {
    ASSERT_TRUE(outcome->ok()) << outcome->detail;
    auto page = decode<OrderPage>(outcome->response.body, ApiVersion::v2026_07);
    ASSERT_TRUE(page) << page.error().to_string();
    for (const auto& order : *page) references.push_back(order.reference_id.value_or(""));
    ++pages;
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(references.size(), 7u);
}

// A certificate for `names` (subjectAltName entries such as "IP:127.0.0.1"), self-signed, made by
// the openssl tool; returns the PEM files' paths.
std::pair<std::filesystem::path, std::filesystem::path> self_signed(const testing::TempDir& dir, const std::string& names) {
  const auto cert = dir / "cert.pem";
  const auto key = dir / "key.pem";
  const auto made = testing::run({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                                  "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key.string(), "-out",
                                  cert.string(), "-days", "1", "-subj", "/CN=fulfillsync test", "-addext",
                                  "subjectAltName=" + names});
  EXPECT_EQ(made.exit_status, 0) << made.stderr_text;
  return {cert, key};
}

class ApiClientTlsTest : public ApiClientTest {
 protected:
  Outcome list_channels(const Sandbox& sandbox, std::optional<std::filesystem::path> ca_file) {
    connect_to(sandbox.base_url(), Sandbox::kToken, std::move(ca_file));
    return call(ApiRequest{"GET", "/channel", "/channel"});
  }
};

TEST_F(ApiClientTlsTest, ASelfSignedCertificateIsRefusedUnlessItIsTheConfiguredCa) {
  const auto [cert, key] = self_signed(dir, "IP:127.0.0.1,DNS:localhost");
  Sandbox sandbox({"--tls-cert", cert.string(), "--tls-key", key.string()});
  ASSERT_EQ(sandbox.base_url().rfind("https://", 0), 0u) << sandbox.base_url();

  const Outcome refused = list_channels(sandbox, std::nullopt);
  EXPECT_EQ(refused.kind, OutcomeKind::not_sent);
  EXPECT_THAT(refused.detail, HasSubstr("TLS handshake"));

  const Outcome trusted = list_channels(sandbox, cert);
  EXPECT_EQ(trusted.kind, OutcomeKind::success) << trusted.detail;
}

TEST_F(ApiClientTlsTest, ACertificateForAnotherHostIsRefused) {
  const auto [cert, key] = self_signed(dir, "DNS:provider.example");
  Sandbox sandbox({"--tls-cert", cert.string(), "--tls-key", key.string()});
  const Outcome refused = list_channels(sandbox, cert);
  EXPECT_EQ(refused.kind, OutcomeKind::not_sent);
  EXPECT_THAT(refused.detail, HasSubstr("TLS handshake"));
}

}  // namespace
}  // namespace fulfillsync::api
