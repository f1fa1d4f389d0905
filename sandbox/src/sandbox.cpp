#include "fulfillsync/sandbox/sandbox.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "fulfillsync/common/crypto.hpp"
#include "fulfillsync/common/json_writer.hpp"
#include "fulfillsync/sandbox/handlers.hpp"

namespace fulfillsync::sandbox {
namespace {

constexpr std::string_view kAdminPrefix = "/_sandbox";

bool is_admin_path(std::string_view path) {
  return path == kAdminPrefix || (path.starts_with(kAdminPrefix) && path[kAdminPrefix.size()] == '/');
}

// "POST /order/{}:cancel" for the stats, whatever the version and ids.
std::string route_key(std::string_view method, const Route* route, std::string_view path) {
  if (route != nullptr) return std::string(method) + " /" + std::string(route->pattern);
  return std::string(method) + " " + std::string(path.substr(0, 64));
}

HttpResponse unauthorized(std::string_view detail, std::string_view path) {
  HttpResponse response = problem(401, detail, path);
  response.set_header("www-authenticate", "Bearer error=\"invalid_token\"");
  return response;
}

}  // namespace

Sandbox::Sandbox(SandboxOptions options)
    : options_(std::move(options)),
      clock_(options_.clock_speed),
      rate_limiter_(options_.rate_limit_per_minute),
      faults_(options_.fault_seed) {
  std::string error;
  auto rules = parse_fault_spec(options_.faults, error);
  if (!rules) throw std::runtime_error("--faults: " + error);
  faults_.set(std::move(*rules), options_.faults, options_.fault_seed);

  if (options_.exchange_log) {
    const std::filesystem::path log(*options_.exchange_log);
    std::error_code ignored;
    if (log.has_parent_path()) std::filesystem::create_directories(log.parent_path(), ignored);
    exchange_log_.open(log, std::ios::app);
    if (!exchange_log_) throw std::runtime_error("--exchange-log: cannot open '" + log.string() + "'");
  }
  if (options_.state_file) {
    journal_ = std::make_unique<Journal>(*options_.state_file);
    secret_ = journal_->secret();
  } else {
    secret_ = crypto::random_bytes(32);
  }
  build_initial_state(secret_);
  if (journal_) {
    std::size_t replayed = 0;
    TimePoint last{};
    journal_->for_each([&](const JournalEntry& entry) {
      replay(entry);
      last = entry.at;
      ++replayed;
    });
    stats_.clear();  // the stats count this run's requests, not the replay
    // Answers showed times after the last journaled request (a GET's Date, a shipment's step).
    shown_until_ = journal_->shown_until();
    if (shown_until_ && *shown_until_ > last) last = *shown_until_;
    if (replayed > 0 || shown_until_) clock_.resume_from(last);
    if (replayed > 0) spdlog::info("state: replayed {} journaled requests from {}", replayed, *options_.state_file);
  }
}

TimePoint Sandbox::shown_now() {
  const TimePoint now = clock_.now();
  if (journal_ && (!shown_until_ || now > *shown_until_)) {
    const auto real_second = std::chrono::duration_cast<TimePoint::duration>(
        std::chrono::duration<double>(std::max(1.0, clock_.speed())));
    shown_until_ = now + real_second;
    try {
      journal_->set_shown_until(*shown_until_);
    } catch (const std::exception& error) {
      spdlog::error("state: cannot keep the time shown ({}); a restart may resume from an earlier one", error.what());
    }
  }
  return now;
}

Sandbox::~Sandbox() = default;

void Sandbox::build_initial_state(const std::string& secret) {
  store_ = std::make_unique<Store>();
  auth_ = std::make_unique<Auth>(secret);
  simulator_.clear();
  const Merchant& merchant = store_->merchant(kDefaultMerchantId);
  for (const auto& token : options_.tokens) {
    auth_->add_personal_token(token, kDefaultMerchantId, merchant.pat_channel_id);
  }
  if (options_.seed == "demo") {
    seed_demo(*store_, clock_.now());
    for (const auto& [id, wro] : store_->receiving_orders) simulator_.schedule(wro);
    OAuthClient demo;
    demo.client_id = "demo-client";
    demo.client_secret = "demo-secret";
    demo.name = "Demo Integration";
    demo.redirect_uris = {"http://127.0.0.1/callback", "https://example.test/callback"};
    demo.scopes = all_read_scopes() | all_write_scopes();
    auth_->add_client(std::move(demo));
  }
}

void Sandbox::reset() {
  build_initial_state(secret_);
  rate_limiter_.clear();
  stats_.clear();
  if (journal_) journal_->clear();
}

FaultDecision Sandbox::decide_fault(const HttpRequest& request) {
  const std::string_view path = request.path();
  if (is_admin_path(path) || path == "/openapi.yaml" || !faults_.active()) return {};
  return faults_.decide(request.method, path);
}

void Sandbox::count_fault(const FaultDecision& decision) {
  switch (decision.kind) {
    case FaultKind::none: break;
    case FaultKind::status: ++stats_.faults[std::to_string(decision.status)]; break;
    case FaultKind::drop_before: ++stats_.faults["drop_before"]; break;
    case FaultKind::drop_after: ++stats_.faults["drop_after"]; break;
    case FaultKind::malformed: ++stats_.faults["malformed"]; break;
    case FaultKind::truncated: ++stats_.faults["truncated"]; break;
  }
  if (decision.latency.count() > 0) ++stats_.faults["latency"];
}

HttpResponse Sandbox::fault_response(const FaultDecision& decision, const HttpRequest& request) {
  // Production's 429 body and headers, waiting what the rule says (25 s unless told).
  if (decision.status == 429) return rate_limited(decision.retry_after_seconds);
  return problem(decision.status, "Injected fault: the sandbox answered " + std::to_string(decision.status) + ".",
                 request.path());
}

void Sandbox::record_exchange(const HttpRequest& request, const HttpResponse& response, const FaultDecision& fault) {
  if (!exchange_log_.is_open()) return;
  const char* delivered = fault.kind == FaultKind::drop_after  ? "drop_after"
                          : fault.kind == FaultKind::truncated ? "truncated"
                          : fault.kind == FaultKind::malformed ? "malformed"
                          : fault.kind == FaultKind::status    ? "injected_status"
                                                               : "none";
  json::JsonWriter w;
  w.begin_object().field("method", request.method).field("target", request.target).field("status", response.status)
      .field("content_type", response.content_type).field("fault", delivered).key("headers").begin_object();
  for (const auto& [name, value] : response.headers) w.field(name, value);
  w.end_object().field("body", response.body).end_object();
  // One line per exchange, flushed so a killed sandbox leaves whole lines behind.
  exchange_log_ << w.take() << '\n' << std::flush;
}

HttpResponse Sandbox::handle(const HttpRequest& request) {
  const TimePoint now = clock_.now();
  simulator_.advance(*store_, now);
  const std::string_view path = request.path();

  if (is_admin_path(path)) {
    if (!options_.admin_token) return problem(404, "Not found.", path);
    const std::string_view presented = request.header("x-sandbox-admin-token");
    if (!crypto::equal(presented, *options_.admin_token)) {
      return problem(401, "The admin path needs the header X-Sandbox-Admin-Token.", path);
    }
    HttpResponse response = handle_admin(*this, request);
    if (journal_ && response.status < 400 && admin_changes_state(request) && path != "/_sandbox/reset") {
      journal_->append({now, Principal{}, request});
    }
    return response;
  }

  if (path == "/openapi.yaml") {
    // The API description is public: no token, not rate limited, never faulted.
    HttpResponse response;
    if (request.method == "GET") {
      response.content_type = "application/yaml; charset=utf-8";
      response.body = std::string(openapi_description());
    } else {
      response = problem(405, "Method not allowed.", path);
      response.set_header("allow", "GET");
    }
    return response;
  }

  if (path == "/connect/authorize" || path == "/connect/token") {
    HttpResponse response;
    if (path == "/connect/authorize" && request.method == "GET") {
      response = oauth_authorize(*this, request);
    } else if (path == "/connect/token" && request.method == "POST") {
      response = oauth_token(*this, request);
    } else {
      response = problem(405, "Method not allowed.", path);
      response.set_header("allow", path == "/connect/token" ? "POST" : "GET");
    }
    ++stats_.requests[std::string(request.method) + " " + std::string(path)][response.status];
    // The token endpoint changes state even when it refuses (a replayed code revokes tokens).
    const bool token_request = path == "/connect/token" && request.method == "POST";
    if (journal_ && (response.status < 400 || token_request)) journal_->append({now, Principal{}, request});
    return response;
  }

  // /{version}/{operation path}; a target without a path ("?x") names no operation.
  const std::string_view after_slash = path.starts_with('/') ? path.substr(1) : std::string_view{};
  const auto version_end = after_slash.find('/');
  const auto version = parse_version(after_slash.substr(0, version_end));
  const Route* route = nullptr;
  std::vector<std::string_view> params;
  HttpResponse response;
  if (!version || version_end == std::string_view::npos) {
    response = problem(404, "No API operation has this path; paths start with a version (2025-07, 2026-01, 2026-07).",
                       path);
  } else {
    bool path_known = false;
    std::string allowed;
    route = match_route(request.method, after_slash.substr(version_end + 1), params, path_known, allowed);
    if (route == nullptr && path_known) {
      response = problem(405, "This path does not accept " + request.method + ".", path);
      response.set_header("allow", allowed);
    } else if (route == nullptr || route->since > *version) {
      route = nullptr;
      response = problem(404, "No API operation has this path in version " + std::string(version_name(*version)) + ".",
                         path);
    } else {
      Auth::Failure failure = Auth::Failure::missing;
      const auto principal = auth_->authenticate(request.header("authorization"), now, failure);
      if (!principal) {
        response = unauthorized(failure == Auth::Failure::missing   ? "The Authorization header is missing."
                                : failure == Auth::Failure::expired ? "The access token has expired."
                                                                    : "The bearer token is not valid.",
                                path);
      } else {
        const auto admitted = rate_limiter_.admit(std::to_string(principal->merchant_id) + "/" + principal->application,
                                                  RateLimiter::Clock::now());
        if (!admitted.allowed) {
          ++stats_.rate_limited;
          response = rate_limited(admitted.retry_after_seconds);
        } else {
          Call call{*this, *store_, request, *version, *principal, params, Query(request.query()), now};
          response = dispatch(*route, call);
          const std::string_view operation = after_slash.substr(version_end);
          if (request.method != "GET" && operation.starts_with("/product") &&
              stats_.catalog_writes.size() < Stats::kMaxCatalogWrites) {
            stats_.catalog_writes.push_back({request.method, std::string(operation), request.body, response.status});
          }
          if (journal_ && route->journaled && response.status < 400) journal_->append({now, *principal, request});
          if (rate_limiter_.enabled()) response.set_header("x-remaining-calls", std::to_string(admitted.remaining));
        }
      }
    }
  }
  ++stats_.requests[route_key(request.method, route, path)][response.status];
  return response;
}

HttpResponse Sandbox::dispatch(const Route& route, Call& call) {
  const std::string_view path = call.request.path();
  if ((call.principal.scopes & bit(route.scope)) == 0) {
    return problem(403, "The token lacks the scope " + std::string(scope_name(route.scope)) + ".", path);
  }
  const std::string_view channel_header = call.request.header("service_channel_id");
  if (!channel_header.empty()) {
    const auto channel_id = parse_int(channel_header);
    Channel* channel = channel_id ? store_->find_channel(static_cast<int>(*channel_id)) : nullptr;
    if (channel == nullptr || channel->merchant_id != call.principal.merchant_id) {
      return problem(403, "service_channel_id " + std::string(channel_header) + " is not a channel of this merchant.",
                     path);
    }
    call.channel = channel;
  }
  if (route.creates) {
    if (call.channel == nullptr) {
      Validation validation;
      validation.add("service_channel_id", "The service_channel_id header is required: use the id of a channel "
                                           "with write scopes from GET /channel.");
      return validation_problem(400, validation, path);
    }
    if ((call.channel->scopes & bit(route.scope)) == 0) {
      return problem(403, "Channel " + std::to_string(call.channel->id) + " has no " +
                              std::string(scope_name(route.scope)) + " scope; use a channel with write scopes.",
                     path);
    }
  }
  try {
    return route.handler(call);
  } catch (const std::exception& error) {
    spdlog::error("{} {}: {}", call.request.method, call.request.target, error.what());
    return problem(500, "The sandbox failed to handle the request.", path);
  }
}

void Sandbox::replay(const JournalEntry& entry) {
  clock_.pin(entry.at);
  simulator_.advance(*store_, entry.at);
  const HttpRequest& request = entry.request;
  const std::string_view path = request.path();
  if (is_admin_path(path)) {
    handle_admin(*this, request);
  } else if (path == "/connect/authorize") {
    oauth_authorize(*this, request);
  } else if (path == "/connect/token") {
    oauth_token(*this, request);
  } else {
    const std::string_view after_slash = path.substr(1);
    const auto version_end = after_slash.find('/');
    const auto version = parse_version(after_slash.substr(0, version_end));
    std::vector<std::string_view> params;
    bool path_known = false;
    std::string allowed;
    const Route* route =
        version ? match_route(request.method, after_slash.substr(version_end + 1), params, path_known, allowed) : nullptr;
    if (route != nullptr) {
      Call call{*this, *store_, request, *version, entry.principal, params, Query(request.query()), entry.at};
      dispatch(*route, call);
    }
  }
  clock_.unpin();
}

}  // namespace fulfillsync::sandbox
