#pragma once
// Each job's figures as `fulfillsyncd status` shows them: the daemon saves them in the checkpoint
// store every progress interval, and status (another process) reads them back.
#include <optional>
#include <string>
#include <vector>

#include "fulfillsync/daemon/checkpoint_store.hpp"

namespace fulfillsync::daemon {

struct JobStats {
  std::string job;
  long runs = 0;
  long failed_runs = 0;
  long items = 0;  // settled since the daemon started
  double last_run_seconds = 0;
  std::optional<std::string> last_success_at{};  // ISO 8601, UTC
  std::optional<std::string> data_as_of{};       // pull jobs: see Job::data_as_of()
  std::string updated_at{};                      // read back only
};

void save_job_stats(CheckpointStore& store, const std::vector<JobStats>& stats);
std::vector<JobStats> load_job_stats(CheckpointStore& store);

}  // namespace fulfillsync::daemon
