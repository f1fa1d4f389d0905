#pragma once
// Starts a fulfillsync-sandbox for one test (port 0, its own temp dir) and talks to it.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "fulfillsync/testing/http.hpp"
#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::sandbox_test {

using testing::HttpResponse;

inline constexpr std::string_view kToken = "test-token";
inline constexpr std::string_view kAdminToken = "admin-secret";
inline constexpr int kWriteChannel = 2;     // the personal-token channel of merchant 1
inline constexpr int kReadOnlyChannel = 1;  // its default channel

class Sandbox {
 public:
  // Default arguments: --listen 127.0.0.1:0 --token test-token --admin-token admin-secret
  // --rate-limit off, then `extra` (later options win).
  explicit Sandbox(std::vector<std::string> extra = {}, bool defaults = true);

  std::uint16_t port() const { return port_; }
  testing::ChildProcess& process() { return *process_; }
  const testing::TempDir& dir() const { return dir_; }

  // With Authorization: Bearer <token> and, for bodies, Content-Type: application/json.
  HttpResponse call(std::string_view method, std::string_view target, std::string_view body = {},
                    std::map<std::string, std::string> headers = {}, std::string_view token = kToken) const;
  HttpResponse get(std::string_view target) const { return call("GET", target); }
  // POST with service_channel_id of the write channel.
  HttpResponse create(std::string_view target, std::string_view body) const {
    return call("POST", target, body, {{"service_channel_id", std::to_string(kWriteChannel)}});
  }
  HttpResponse raw(std::string_view method, std::string_view target, std::map<std::string, std::string> headers = {},
                   std::string_view body = {}) const;
  HttpResponse admin(std::string_view method, std::string_view target, std::string_view body = {}) const;
  void advance_clock(long long seconds) const;

  // Creates an order (2026-01) and returns its parsed body.
  simdjson::dom::element create_order(std::string_view reference_id, std::string_view extra_fields = {}) const;

 private:
  testing::TempDir dir_;
  std::unique_ptr<testing::ChildProcess> process_;
  std::uint16_t port_ = 0;
};

// A valid POST /order body; `extra_fields` (",\"key\":value...") is spliced in.
std::string order_body(std::string_view reference_id, std::string_view extra_fields = {});

// A query value with '+' (UTC offsets) and other reserved characters percent-encoded.
std::string encoded(std::string_view value);

// Parses JSON; the element stays valid until the test ends. Fails the test on invalid JSON.
simdjson::dom::element parse(const std::string& text);

std::int64_t as_int(simdjson::dom::element element);
std::string as_string(simdjson::dom::element element);
bool as_bool(simdjson::dom::element element);
// The fields named in a problem-details `errors` object.
std::vector<std::string> error_fields(const HttpResponse& response);

// The base64url SHA-256 of a PKCE verifier.
std::string pkce_challenge(std::string_view verifier);

}  // namespace fulfillsync::sandbox_test

namespace fulfillsync::sandbox_test {

// Sends raw bytes on a fresh connection and returns what the server sends back until it closes
// or `timeout` passes (`timed_out` tells which).
struct RawExchange {
  std::string received;
  bool timed_out = false;
  bool send_failed = false;
};
RawExchange raw_exchange(std::uint16_t port, const std::string& bytes, std::chrono::milliseconds timeout);

}  // namespace fulfillsync::sandbox_test
