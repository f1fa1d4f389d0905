#include "sandbox_fixture.hpp"

#include "fulfillsync/common/crypto.hpp"

#include <deque>
#include <stdexcept>

#include <gtest/gtest.h>

namespace fulfillsync::sandbox_test {

Sandbox::Sandbox(std::vector<std::string> extra, bool defaults) {
  testing::ChildProcess::Options options;
  options.argv = {testing::binary_path("fulfillsync-sandbox").string()};
  if (defaults) {
    for (std::string arg : std::vector<std::string>{"--listen", "127.0.0.1:0", "--token", std::string(kToken), "--admin-token",
                            std::string(kAdminToken), "--rate-limit", "off", "--log-level", "warn"}) {
      options.argv.push_back(arg);
    }
  }
  for (auto& arg : extra) options.argv.push_back(std::move(arg));
  options.working_dir = dir_.path();
  process_ = std::make_unique<testing::ChildProcess>(std::move(options));
  const auto line = process_->wait_for_stdout("listening on ", std::chrono::seconds(20));
  if (!line) throw std::runtime_error("the sandbox did not start: " + process_->stderr_text());
  const auto colon = line->rfind(':');
  port_ = static_cast<std::uint16_t>(std::stoi(line->substr(colon + 1)));
}

HttpResponse Sandbox::call(std::string_view method, std::string_view target, std::string_view body,
                           std::map<std::string, std::string> headers, std::string_view token) const {
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + std::string(token));
  if (!body.empty()) headers.emplace("Content-Type", "application/json");
  return testing::http_request("127.0.0.1", port_, method, target, headers, body);
}

HttpResponse Sandbox::raw(std::string_view method, std::string_view target, std::map<std::string, std::string> headers,
                          std::string_view body) const {
  return testing::http_request("127.0.0.1", port_, method, target, headers, body);
}

HttpResponse Sandbox::admin(std::string_view method, std::string_view target, std::string_view body) const {
  return testing::http_request("127.0.0.1", port_, method, target,
                               {{"X-Sandbox-Admin-Token", std::string(kAdminToken)}}, body);
}

void Sandbox::advance_clock(long long seconds) const {
  const auto response = admin("POST", "/_sandbox/clock/advance?seconds=" + std::to_string(seconds));
  ASSERT_EQ(response.status, 200) << response.body;
}

simdjson::dom::element Sandbox::create_order(std::string_view reference_id, std::string_view extra_fields) const {
  const auto response = create("/2026-01/order", order_body(reference_id, extra_fields));
  EXPECT_EQ(response.status, 201) << response.body;
  return parse(response.body);
}

std::string order_body(std::string_view reference_id, std::string_view extra_fields) {
  return R"({"reference_id":")" + std::string(reference_id) +
         R"(","shipping_method":"Standard","recipient":{"name":"Ada Lovelace","email":"ada@example.test",)"
         R"("address":{"address1":"1 Main St","city":"Chicago","state":"IL","zip_code":"60601","country":"US"}},)"
         R"("products":[{"reference_id":"SKU-1","name":"Widget","quantity":2}],"financials":{"total_price":12.30})" +
         std::string(extra_fields) + "}";
}

std::string encoded(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '+' || c == '&' || c == '=' || c == '#' || c == ' ' || c == '%') {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out.push_back('%');
      out.push_back(kHex[static_cast<unsigned char>(c) >> 4]);
      out.push_back(kHex[static_cast<unsigned char>(c) & 0xF]);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

simdjson::dom::element parse(const std::string& text) {
  static std::deque<simdjson::dom::parser> parsers;
  parsers.emplace_back();
  simdjson::dom::element root;
  const auto error = parsers.back().parse(text).get(root);
  EXPECT_EQ(error, simdjson::SUCCESS) << "not JSON: " << text.substr(0, 300);
  if (error != simdjson::SUCCESS) throw std::runtime_error("not JSON");
  return root;
}

std::int64_t as_int(simdjson::dom::element element) {
  std::int64_t value = 0;
  EXPECT_EQ(element.get_int64().get(value), simdjson::SUCCESS) << simdjson::minify(element);
  return value;
}

std::string as_string(simdjson::dom::element element) {
  std::string_view value;
  EXPECT_EQ(element.get_string().get(value), simdjson::SUCCESS) << simdjson::minify(element);
  return std::string(value);
}

bool as_bool(simdjson::dom::element element) {
  bool value = false;
  EXPECT_EQ(element.get_bool().get(value), simdjson::SUCCESS) << simdjson::minify(element);
  return value;
}

std::vector<std::string> error_fields(const HttpResponse& response) {
  std::vector<std::string> fields;
  simdjson::dom::object errors;
  if (parse(response.body)["errors"].get_object().get(errors) != simdjson::SUCCESS) return fields;
  for (auto field : errors) fields.emplace_back(field.key);
  return fields;
}

std::string pkce_challenge(std::string_view verifier) { return crypto::base64url(crypto::sha256(verifier)); }

}  // namespace fulfillsync::sandbox_test

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace fulfillsync::sandbox_test {

RawExchange raw_exchange(std::uint16_t port, const std::string& bytes, std::chrono::milliseconds timeout) {
  RawExchange result;
  const int fd = testing::connect_loopback(port);
  if (fd < 0) throw std::runtime_error("cannot connect");
  result.send_failed = !testing::send_all(fd, bytes);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd waiting{fd, POLLIN, 0};
    if (poll(&waiting, 1, static_cast<int>(left.count())) <= 0) {
      result.timed_out = true;
      break;
    }
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    result.received.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
  return result;
}

}  // namespace fulfillsync::sandbox_test
