#pragma once
// Each job's figures as `fulfillsyncd status` shows them: the daemon saves them in the checkpoint
// store every progress interval, and status (another process) reads them back.
#include <optional>
#include <string>
#include <vector>

#include "fulfillsync/daemon/store/checkpoint_store.hpp"

namespace fulfillsync::daemon {

struct JobStats {
  std::string job;
  long runs = 0;
  long failed_runs = 0;
  long items = 0;  // settled since the daemon started
  double last_run_seconds = 0;
  std::optional<std::string> last_success_at{};  // ISO 8601, UTC
  std::optional<std::string> data_as_of{};       // pull jobs: see Job::data_as_of()
  long failed_in_a_row = 0;                      // runs failed since the last that did not
  bool paused = false;                           // until an operator acts: see Job::paused()
  std::optional<std::string> last_answer_at{};   // the provider's last answer to the job's calls
  int last_answer_status = 0;                    // its HTTP status
  std::optional<std::string> last_error_at{};    // the job's last error: a call that failed or a run that threw
  std::string last_error{};
  std::string updated_at{};                      // read back only
};

void save_job_stats(CheckpointStore& store, const std::vector<JobStats>& stats);
std::vector<JobStats> load_job_stats(CheckpointStore& store);

}  // namespace fulfillsync::daemon
