#pragma once
// A fulfillsync-sandbox started for one test on an ephemeral loopback port, stopped with the test.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fulfillsync/testing/http.hpp"
#include "fulfillsync/testing/process.hpp"

namespace fulfillsync::testing {

class Sandbox {
 public:
  static constexpr const char* kToken = "test-token";
  static constexpr const char* kAdminToken = "test-admin-token";

  // Starts it with a personal access token, the admin token, the demo seed, no rate limit (unless
  // `extra_args` sets one) and `extra_args`; waits until it listens on `port` (0: an ephemeral one).
  // `program`: the build's, unless a benchmark names the one beside it.
  explicit Sandbox(std::vector<std::string> extra_args = {}, std::uint16_t port = 0,
                   std::filesystem::path program = binary_path("fulfillsync-sandbox"));
  ~Sandbox();

  std::uint16_t port() const { return port_; }
  // "http://127.0.0.1:PORT" (https:// with --tls-cert).
  const std::string& base_url() const { return base_url_; }

  // Requests to its admin path (/_sandbox/...), with the admin token.
  HttpResponse admin(std::string_view method, std::string_view path, std::string_view body = {}) const;

  ChildProcess& process() { return *process_; }

 private:
  std::unique_ptr<ChildProcess> process_;
  std::uint16_t port_ = 0;
  std::string base_url_;
};

}  // namespace fulfillsync::testing
