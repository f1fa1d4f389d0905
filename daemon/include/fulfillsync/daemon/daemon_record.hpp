#pragma once
// Which daemon runs on a checkpoint store, as `fulfillsyncd status` finds out. The daemon notes itself
// in the store when it starts: its PID, and what no later process given the same PID shares (its
// start time in clock ticks since boot, and the boot's id). A clean stop notes the stop. status
// compares the note with /proc, so a daemon killed without a stop, or a PID reused since, does not
// read as running.
#include <optional>
#include <string>

#include "fulfillsync/daemon/checkpoint_store.hpp"

namespace fulfillsync::daemon {

struct DaemonRecord {
  long pid = 0;
  long long start_ticks = 0;  // field 22 of /proc/PID/stat
  std::string boot_id;
  std::string version;
  std::string started_at;  // ISO 8601, UTC
  std::optional<std::string> stopped_at{};
  // What the daemon waits for before its jobs can start (the provider's first answer); nothing once
  // they run.
  std::optional<std::string> waiting_for{};
};

// The daemon (this process) notes its start, what it waits for, and its clean stop.
void record_daemon_start(CheckpointStore& store);
void record_daemon_waiting(CheckpointStore& store, const std::optional<std::string>& what);
void record_daemon_stop(CheckpointStore& store);

// The daemon that last started on the store; nothing when none has (or the store is older).
std::optional<DaemonRecord> load_daemon_record(CheckpointStore& store);

// Whether the recorded daemon runs now: not stopped, and /proc/PID is the same process (same boot,
// same start time).
bool is_running(const DaemonRecord& record);

// /proc/PID/stat's start time of `pid`, nothing when there is no such process.
std::optional<long long> process_start_ticks(long pid);

}  // namespace fulfillsync::daemon
