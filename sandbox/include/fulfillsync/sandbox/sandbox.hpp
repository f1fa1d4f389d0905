#pragma once
// The emulated provider as one object the transport calls into: it decides faults, authenticates,
// rate-limits, routes to the operation handlers and journals state changes. Single-threaded: the
// server calls it from its one io_context thread.
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include <simdjson.h>

#include "fulfillsync/sandbox/auth.hpp"
#include "fulfillsync/sandbox/clock.hpp"
#include "fulfillsync/sandbox/faults.hpp"
#include "fulfillsync/sandbox/http_types.hpp"
#include "fulfillsync/sandbox/journal.hpp"
#include "fulfillsync/sandbox/options.hpp"
#include "fulfillsync/sandbox/rate_limiter.hpp"
#include "fulfillsync/sandbox/simulation.hpp"
#include "fulfillsync/sandbox/stats.hpp"
#include "fulfillsync/sandbox/store.hpp"

namespace fulfillsync::sandbox {

struct Route;
struct Call;

class Sandbox {
 public:
  // Throws std::runtime_error for a bad fault spec or an unusable state file.
  explicit Sandbox(SandboxOptions options);
  ~Sandbox();

  // Whether to disturb this request, decided before it is read further; admin requests never are.
  FaultDecision decide_fault(const HttpRequest& request);
  void count_fault(const FaultDecision& decision);
  HttpResponse handle(const HttpRequest& request);
  // A fault's answer in place of processing (429 with production headers, 5xx problem details).
  HttpResponse fault_response(const FaultDecision& decision, const HttpRequest& request);
  // Appends the exchange to the exchange log (SandboxOptions::exchange_log), if there is one, as
  // it was answered: `fault` says whether the client got it whole (drop_after, truncated and
  // malformed answers are marked so a contract check can exempt them).
  void record_exchange(const HttpRequest& request, const HttpResponse& response, const FaultDecision& fault);

  // --- used by the handlers ---
  const SandboxOptions& options() const { return options_; }
  SimClock& clock() { return clock_; }
  // The simulated now for an answer's Date, the latest time an answer shows. With --state, a time a
  // real second ahead is first kept in the file whenever now passes the one kept, so that a restart
  // resumes from no earlier than any time shown: the provider's clock never goes back.
  TimePoint shown_now();
  Store& store() { return *store_; }
  Auth& auth() { return *auth_; }
  Faults& faults() { return faults_; }
  Stats& stats() { return stats_; }
  Simulator& simulator() { return simulator_; }
  Journal* journal() { return journal_.get(); }
  simdjson::dom::parser& parser() { return parser_; }
  RateLimiter& rate_limiter() { return rate_limiter_; }

  // Back to the state at start-up (command-line tokens, seed); clears the journal.
  void reset();
  // Applies a journaled request again (state replay at start-up).
  void replay(const JournalEntry& entry);

 private:
  void build_initial_state(const std::string& secret);
  HttpResponse dispatch(const Route& route, Call& call);

  SandboxOptions options_;
  SimClock clock_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Auth> auth_;
  RateLimiter rate_limiter_;
  Faults faults_;
  Stats stats_;
  Simulator simulator_;
  std::unique_ptr<Journal> journal_;
  std::optional<TimePoint> shown_until_;  // kept in the journal's file
  std::ofstream exchange_log_;
  simdjson::dom::parser parser_;
  std::string secret_;
};

// The OpenAPI 3.1 description of the API (sandbox/openapi/fulfillment-api.yaml), served without a
// token at GET /openapi.yaml.
std::string_view openapi_description();

}  // namespace fulfillsync::sandbox
