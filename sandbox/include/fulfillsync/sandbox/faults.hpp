#pragma once
// Seeded, reproducible fault injection. The grammar (shared by --faults and POST /_sandbox/faults)
// is documented in sandbox/README.md:
//
//   route=POST /*/order;429=0.1;500=0.05;latency_ms=200@0.2;drop_before=0.05 | route=GET /**;503=0.01
//
// Rules are separated by '|' or newlines, items by ';'. The first rule whose route matches a
// request decides; outcomes of one rule are exclusive (their probabilities add up to at most 1).
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace fulfillsync::sandbox {

enum class FaultKind { none, status, drop_before, drop_after, malformed, truncated };

struct FaultDecision {
  FaultKind kind = FaultKind::none;
  int status = 0;  // with FaultKind::status: 429, 500, 502, 503 or 504
  int retry_after_seconds = 25;  // what an injected 429 asks for
  std::chrono::milliseconds latency{0};
};

struct FaultRule {
  std::string method;   // empty: any
  std::string pattern;  // glob: '*' within a segment, '**' across segments; empty: any path
  std::vector<std::pair<int, double>> statuses;
  double drop_before = 0, drop_after = 0, malformed = 0, truncated = 0;
  int retry_after_seconds = 25;  // x-retry-after of this rule's injected 429s; 25 s is production's usual
  std::chrono::milliseconds latency{0};
  double latency_probability = 0;
};

// Parses a spec; on error returns nothing and says why in `error`. An empty spec has no rules.
std::optional<std::vector<FaultRule>> parse_fault_spec(std::string_view spec, std::string& error);

// '*' matches within one path segment, '**' across segments.
bool glob_match(std::string_view pattern, std::string_view path);

class Faults {
 public:
  explicit Faults(std::uint64_t seed = 1) : seed_(seed), random_(seed) {}

  // Replaces the rules (and restarts the random sequence from `seed`).
  void set(std::vector<FaultRule> rules, std::string spec, std::uint64_t seed);
  FaultDecision decide(std::string_view method, std::string_view path);
  const std::string& spec() const { return spec_; }
  std::uint64_t seed() const { return seed_; }
  bool active() const { return !rules_.empty(); }

 private:
  double roll();

  std::vector<FaultRule> rules_;
  std::string spec_;
  std::uint64_t seed_;
  std::mt19937_64 random_;
};

}  // namespace fulfillsync::sandbox
