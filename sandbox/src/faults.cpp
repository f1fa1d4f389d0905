#include "fulfillsync/sandbox/faults.hpp"

#include <charconv>

namespace fulfillsync::sandbox {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> split(std::string_view text, std::string_view separators) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || separators.find(text[i]) != std::string_view::npos) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

bool parse_probability(std::string_view text, double& value) {
  text = trim(text);
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  return result.ec == std::errc{} && result.ptr == text.data() + text.size() && value >= 0 && value <= 1;
}

bool parse_rule(std::string_view text, FaultRule& rule, std::string& error) {
  for (std::string_view item : split(text, ";")) {
    item = trim(item);
    if (item.empty()) continue;
    const auto equals = item.find('=');
    if (equals == std::string_view::npos) {
      error = "'" + std::string(item) + "': expected key=value";
      return false;
    }
    const std::string_view key = trim(item.substr(0, equals));
    const std::string_view value = trim(item.substr(equals + 1));
    double probability = 0;
    if (key == "route") {
      const auto space = value.find(' ');
      if (space == std::string_view::npos) {
        rule.pattern = std::string(value);
      } else {
        rule.method = std::string(trim(value.substr(0, space)));
        rule.pattern = std::string(trim(value.substr(space + 1)));
        if (rule.method == "*") rule.method.clear();
      }
      if (!rule.pattern.empty() && rule.pattern.front() != '/') {
        error = "route pattern '" + rule.pattern + "' must start with '/'";
        return false;
      }
    } else if (key == "latency_ms") {
      const auto at = value.find('@');
      const std::string_view millis = trim(value.substr(0, at));
      long long amount = 0;
      const auto result = std::from_chars(millis.data(), millis.data() + millis.size(), amount);
      if (result.ec != std::errc{} || result.ptr != millis.data() + millis.size() || amount < 0 || amount > 600000) {
        error = "latency_ms: expected milliseconds (0 to 600000), got '" + std::string(millis) + "'";
        return false;
      }
      rule.latency = std::chrono::milliseconds(amount);
      rule.latency_probability = 1;
      if (at != std::string_view::npos && !parse_probability(value.substr(at + 1), rule.latency_probability)) {
        error = "latency_ms: probability after '@' must be between 0 and 1";
        return false;
      }
    } else if (key == "retry_after_s") {
      const std::string_view seconds = trim(value);
      int amount = 0;
      const auto result = std::from_chars(seconds.data(), seconds.data() + seconds.size(), amount);
      if (result.ec != std::errc{} || result.ptr != seconds.data() + seconds.size() || amount < 0 || amount > 3600) {
        error = "retry_after_s: expected seconds (0 to 3600), got '" + std::string(seconds) + "'";
        return false;
      }
      rule.retry_after_seconds = amount;
    } else if (!parse_probability(value, probability)) {
      error = std::string(key) + ": probability must be a number between 0 and 1, got '" + std::string(value) + "'";
      return false;
    } else if (key == "429" || key == "500" || key == "502" || key == "503" || key == "504") {
      rule.statuses.emplace_back(std::stoi(std::string(key)), probability);
    } else if (key == "drop_before") {
      rule.drop_before = probability;
    } else if (key == "drop_after") {
      rule.drop_after = probability;
    } else if (key == "malformed") {
      rule.malformed = probability;
    } else if (key == "truncated") {
      rule.truncated = probability;
    } else {
      error = "unknown fault '" + std::string(key) +
              "' (known: route, 429, 500, 502, 503, 504, retry_after_s, latency_ms, drop_before, drop_after, malformed, "
              "truncated)";
      return false;
    }
  }
  double total = rule.drop_before + rule.drop_after + rule.malformed + rule.truncated;
  for (const auto& [status, probability] : rule.statuses) total += probability;
  if (total > 1.0 + 1e-9) {
    error = "the outcome probabilities of one rule add up to more than 1";
    return false;
  }
  return true;
}

}  // namespace

std::optional<std::vector<FaultRule>> parse_fault_spec(std::string_view spec, std::string& error) {
  std::vector<FaultRule> rules;
  for (std::string_view text : split(spec, "|\n")) {
    if (trim(text).empty()) continue;
    FaultRule rule;
    if (!parse_rule(text, rule, error)) return std::nullopt;
    rules.push_back(std::move(rule));
  }
  return rules;
}

bool glob_match(std::string_view pattern, std::string_view path) {
  // Literal characters in a loop: recursion only at stars, so depth is bounded by the pattern.
  while (!pattern.empty() && pattern.front() != '*') {
    if (path.empty() || path.front() != pattern.front()) return false;
    pattern.remove_prefix(1);
    path.remove_prefix(1);
  }
  if (pattern.empty()) return path.empty();
  const bool any_depth = pattern.starts_with("**");
  const std::string_view rest = pattern.substr(any_depth ? 2 : 1);
  for (std::size_t i = 0; i <= path.size(); ++i) {
    if (glob_match(rest, path.substr(i))) return true;
    if (!any_depth && i < path.size() && path[i] == '/') break;
  }
  return false;
}

void Faults::set(std::vector<FaultRule> rules, std::string spec, std::uint64_t seed) {
  rules_ = std::move(rules);
  spec_ = std::move(spec);
  seed_ = seed;
  random_.seed(seed);
}

double Faults::roll() { return static_cast<double>(random_() >> 11) * 0x1.0p-53; }

FaultDecision Faults::decide(std::string_view method, std::string_view path) {
  FaultDecision decision;
  for (const auto& rule : rules_) {
    if (!rule.method.empty() && rule.method != method) continue;
    if (!rule.pattern.empty() && !glob_match(rule.pattern, path)) continue;
    // Two draws per matching request, always, so a seed replays the same sequence.
    const double latency_roll = roll();
    double outcome_roll = roll();
    if (rule.latency.count() > 0 && latency_roll < rule.latency_probability) decision.latency = rule.latency;
    const auto pick = [&](double probability) {
      if (outcome_roll < probability) return true;
      outcome_roll -= probability;
      return false;
    };
    for (const auto& [status, probability] : rule.statuses) {
      if (pick(probability)) {
        decision.kind = FaultKind::status;
        decision.status = status;
        decision.retry_after_seconds = rule.retry_after_seconds;
        return decision;
      }
    }
    if (pick(rule.drop_before)) decision.kind = FaultKind::drop_before;
    else if (pick(rule.drop_after)) decision.kind = FaultKind::drop_after;
    else if (pick(rule.malformed)) decision.kind = FaultKind::malformed;
    else if (pick(rule.truncated)) decision.kind = FaultKind::truncated;
    return decision;
  }
  return decision;
}

}  // namespace fulfillsync::sandbox
