#pragma once
// The provider's last answer to one caller's calls (a sync job's), and the last call that failed:
// what `fulfillsyncd status` shows per job.
#include <chrono>
#include <optional>
#include <string>

namespace fulfillsync::api {

struct AnswerLog {
  std::optional<std::chrono::system_clock::time_point> answered_at{};  // the last call the provider answered
  int status = 0;                                                        // that answer's HTTP status
  std::optional<std::chrono::system_clock::time_point> failed_at{};      // the last call that failed
  std::string failure{};                                                 // "POST /order: 503 ..."
};

}  // namespace fulfillsync::api
