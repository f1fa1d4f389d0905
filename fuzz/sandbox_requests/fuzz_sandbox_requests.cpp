// libFuzzer target for the sandbox's request handling, without sockets: each input is a few HTTP
// requests handed to Sandbox::handle() as the server would (after its fault decision). Any status is
// a fine answer; a crash, a sanitizer report, an exception escaping handle(), or a 500 from a handler
// that threw (Sandbox::dispatch turns that into "failed to handle") is a bug.
//
// Inputs are readable requests, as the seed corpus shows, separated by a line "~~~":
//
//   POST /2026-01/order          method and target, sent as they are
//   service_channel_id: 2        headers (names are lower-cased) until an empty line
//
//   {"reference_id": "F-1", ...}  the body
//
// Requests carry the token of merchant 1 and the admin token unless they name their own. Every input
// starts from the same state: the demo seed at a fixed time, no faults, no rate limit.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/sandbox/query.hpp"
#include "fulfillsync/sandbox/sandbox.hpp"

namespace {

using namespace fulfillsync;
using sandbox::HttpRequest;

constexpr std::string_view kToken = "fuzz-token";
constexpr std::string_view kAdminToken = "fuzz-admin";
constexpr std::string_view kSeparator = "\n~~~\n";
constexpr std::size_t kMaxRequests = 8;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

HttpRequest parse_request(std::string_view text) {
  HttpRequest request;
  std::size_t end = text.find('\n');
  const std::string_view request_line = text.substr(0, end);
  const std::size_t space = request_line.find(' ');
  request.method = request_line.substr(0, space);
  if (space != std::string_view::npos) request.target = request_line.substr(space + 1);
  text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  while (!text.empty() && text.front() != '\n') {
    end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      std::string_view value = line.substr(colon + 1);
      if (value.starts_with(' ')) value.remove_prefix(1);
      request.headers.emplace_back(lower(line.substr(0, colon)), value);
    }
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  if (!text.empty()) request.body = text.substr(1);
  if (!request.has_header("authorization")) {
    request.headers.emplace_back("authorization", "Bearer " + std::string(kToken));
  }
  if (!request.has_header("x-sandbox-admin-token")) request.headers.emplace_back("x-sandbox-admin-token", kAdminToken);
  return request;
}

// Bulk creation makes as many orders as asked, up to ten million: slow, and no bug.
bool asks_for_thousands_of_orders(const HttpRequest& request) {
  if (request.path() != "/_sandbox/orders:bulk") return false;
  const sandbox::Query query(request.query());
  const auto count = query.get("count");
  return count && count->size() > 3;
}

sandbox::Sandbox& make_sandbox() {
  spdlog::set_level(spdlog::level::err);  // a handler's exception is logged before the 500
  sandbox::SandboxOptions options;
  options.tokens = {std::string(kToken)};
  options.admin_token = std::string(kAdminToken);
  options.seed = "demo";
  options.rate_limit_per_minute = 0;
  static sandbox::Sandbox instance(std::move(options));
  return instance;
}

// The same state for every input, so that a failing input fails again on its own.
void restart(sandbox::Sandbox& sandbox) {
  // A stopped clock (speed 0) moved only by admin requests; resume_from never goes back, so the
  // fixed start lies in the future.
  static const timestamps::TimePoint start = *timestamps::parse_iso8601("2100-01-01T00:00:00Z");
  sandbox.clock() = sandbox::SimClock(0.0);
  sandbox.clock().resume_from(start);
  sandbox.faults().set({}, "", 1);
  sandbox.reset();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static sandbox::Sandbox& sandbox = make_sandbox();
  restart(sandbox);
  std::string_view input(reinterpret_cast<const char*>(data), size);
  for (std::size_t i = 0; i < kMaxRequests && !input.empty(); ++i) {
    const std::size_t separator = input.find(kSeparator);
    const HttpRequest request = parse_request(input.substr(0, separator));
    input.remove_prefix(separator == std::string_view::npos ? input.size() : separator + kSeparator.size());
    if (asks_for_thousands_of_orders(request)) continue;

    const sandbox::FaultDecision fault = sandbox.decide_fault(request);
    sandbox.count_fault(fault);
    if (fault.kind == sandbox::FaultKind::status) {
      (void)sandbox.fault_response(fault, request);
    } else if (sandbox.handle(request).status == 500) {
      std::abort();  // a handler threw: its message is logged above
    }
  }
  return 0;
}
