#include "fulfillsync/api/client.hpp"

#include <charconv>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/common/version.hpp"

namespace fulfillsync::api {
namespace asio = boost::asio;

ApiClient::ApiClient(asio::any_io_executor executor, Transport& transport, TokenSource& tokens, ApiMetrics& metrics,
                     ClientOptions options)
    : executor_(executor),
      transport_(transport),
      tokens_(tokens),
      metrics_(metrics),
      options_(std::move(options)),
      shared_(std::make_shared<Shared>(executor, options_.requests_per_minute)),
      user_agent_(fmt::format("fulfillsync/{}", kVersion)) {}

Call call_of(ApiClient& client) {
  return [&client](ApiRequest request) { return client.call(std::move(request)); };
}

ApiClient ApiClient::for_caller(AnswerLog& log) const {
  ApiClient face(*this);
  face.log_ = &log;
  return face;
}

void ApiClient::finish(const ApiRequest& request, const Outcome& outcome) {
  metrics_.observe_call(request.route, outcome);
  if (log_ == nullptr) return;
  const auto now = std::chrono::system_clock::now();
  if (outcome.status != 0) {
    log_->answered_at = now;
    log_->status = outcome.status;
  }
  // A 429 is waited out, and a duplicate reference is how a lost create is found: neither failed.
  if (!outcome.ok() && outcome.kind != OutcomeKind::throttled && outcome.kind != OutcomeKind::duplicate_reference) {
    log_->failed_at = now;
    log_->failure = fmt::format("{} {}: {}", request.method, request.route, outcome.detail);
  }
}

std::string ApiClient::target_of(const ApiRequest& request) const {
  std::string target = transport_.options().base.path_prefix + "/" + options_.version + request.path;
  if (!request.query.empty()) target += "?" + encode_query(request.query);
  return target;
}

void ApiClient::learn_remaining(const Outcome& outcome) {
  // A 429 says how long to wait (pause_for); its "0 remaining" is not a count to learn from.
  if (outcome.kind == OutcomeKind::throttled) return;
  for (const char* name : {"x-remaining-calls", "x-ratelimit-remaining"}) {
    const auto remaining = outcome.response.header(name);
    if (!remaining) continue;
    int value = 0;
    if (std::from_chars(remaining->data(), remaining->data() + remaining->size(), value).ec == std::errc{}) {
      shared_->budget.observe_remaining(value);
    }
    return;
  }
}

asio::awaitable<Outcome> ApiClient::call(ApiRequest request) {
  HttpRequest http{request.method, target_of(request), {}, {}, request.idempotent};
  http.headers = {{"User-Agent", user_agent_}, {"Accept", "application/json"}};
  if (!request.body.empty()) http.headers.emplace_back("Content-Type", "application/json");
  if (request.with_channel && shared_->channel) {
    http.headers.emplace_back("service_channel_id", std::to_string(*shared_->channel));
  }

  int retries = 0;
  int throttled_waits = 0;
  bool refreshed = false;
  for (;;) {
    co_await shared_->budget.acquire(request.priority);
    const auto token = co_await tokens_.access_token();
    Outcome outcome;
    if (!token) {
      outcome.kind = OutcomeKind::unauthorized;
      outcome.detail = fmt::format("no {} available", tokens_.kind());
      finish(request, outcome);
      co_return outcome;
    }
    if (request.before_send) {
      co_await request.before_send();
      request.before_send = nullptr;
    }
    HttpRequest attempt = http;
    attempt.body = request.body;
    attempt.headers.emplace_back("Authorization", "Bearer " + *token);

    shared_->retry_budget.record_request();
    const auto started = std::chrono::steady_clock::now();
    outcome = classify(co_await transport_.send(std::move(attempt)));
    const auto took = std::chrono::steady_clock::now() - started;
    metrics_.observe_exchange(request.route, request.method, outcome, took);
    // The target and the outcome only: headers carry the token, bodies personal data. Checked
    // first: the target is built before spdlog looks at the level, once per request.
    if (spdlog::should_log(spdlog::level::trace)) {
      spdlog::trace("{} {} -> {} {} in {} ms", request.method, target_of(request), outcome.status,
                    to_string(outcome.kind), std::chrono::duration_cast<std::chrono::milliseconds>(took).count());
    }
    learn_remaining(outcome);
    metrics_.set_budget(shared_->budget.available(), shared_->budget.limit());

    bool retry = false;
    switch (outcome.kind) {
      case OutcomeKind::throttled:
        // Not executed and not a failure: wait as told, then send the same request again.
        metrics_.count_throttle();
        shared_->budget.pause_for(outcome.retry_after);
        spdlog::warn("{} {}: throttled by the provider; waiting {} ms", request.method, request.route,
                     outcome.retry_after.count());
        if (++throttled_waits <= options_.max_throttled_waits) continue;
        break;
      case OutcomeKind::unauthorized:
        if (!refreshed) {
          refreshed = true;
          const bool renewed = co_await tokens_.refresh();
          metrics_.count_token_refresh(renewed);
          if (renewed) continue;
        }
        break;
      // A certificate that failed verification fails again: the configuration has to change.
      case OutcomeKind::not_sent: retry = !outcome.certificate_refused; break;
      case OutcomeKind::ambiguous: retry = request.idempotent; break;
      default: break;
    }
    if (retry && retries + 1 < options_.retry.max_attempts && shared_->retry_budget.try_spend()) {
      const auto delay = backoff_delay(options_.retry, retries++, shared_->random);
      spdlog::info("{} {}: {} ({}); retrying in {} ms", request.method, request.route, to_string(outcome.kind),
                   outcome.detail, delay.count());
      metrics_.count_retry(request.route);
      asio::steady_timer wait(executor_, delay);
      co_await wait.async_wait(asio::use_awaitable);
      continue;
    }
    finish(request, outcome);
    co_return outcome;
  }
}

}  // namespace fulfillsync::api
