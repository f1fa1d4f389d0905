#pragma once
// Which daemon runs on a checkpoint store, as `fulfillsyncd status` finds out. The daemon notes itself
// in the store when it starts: its PID, and what no later process given the same PID shares (its
// start time in clock ticks since boot). A clean stop notes the stop. status reads, in /proc/locks,
// which process holds the store's lock (the kernel drops it when the holder dies, whatever the
// clock or the boot) and checks it is the noted one, so a daemon killed without a stop, or a PID
// reused since, does not read as running. (The boot id is noted for the operator only: the
// packaged unit's ProcSubset=pid hides /proc/sys from the daemon, so it may be empty.)
#include <filesystem>
#include <optional>
#include <string>

#include "fulfillsync/daemon/store/checkpoint_store.hpp"

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

// The process holding the daemon's exclusive lock on the store, from /proc/locks; nothing when no
// process holds it.
std::optional<long> store_lock_holder(const std::filesystem::path& store);

// Whether the recorded daemon runs now: not stopped, holding the store's lock, and /proc/PID is the
// same process (same start time).
bool is_running(const DaemonRecord& record, const std::filesystem::path& store);

// /proc/PID/stat's start time of `pid`, nothing when there is no such process.
std::optional<long long> process_start_ticks(long pid);

}  // namespace fulfillsync::daemon
