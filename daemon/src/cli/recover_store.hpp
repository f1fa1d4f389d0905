#pragma once
// `fulfillsyncd recover-store` and `fulfillsyncd backup FILE`: the checkpoint store's way out of
// damage, and the consistent copy that makes a restore possible (README, operations guide).
#include <filesystem>
#include <string>

#include "fulfillsync/config/config.hpp"
#include "fulfillsync/daemon/cli/cli.hpp"
#include "fulfillsync/daemon/store/checkpoint_store.hpp"

namespace fulfillsync::daemon {

// The one message for a store that cannot start: what is wrong, with which file, and what to run.
std::string damaged_store_advice(const CheckpointStoreDamaged& damage, const std::filesystem::path& config_path);

// With the daemon stopped: moves the store (and its -wal, -shm) aside as FILE.damaged-TIMESTAMP,
// creates a fresh store, rebuilds it from the result tables (StoreRebuild), checks what it adopted
// at the provider and prints it. Returns the exit code.
int recover_store(const CommandLine& line, config::Config config);

// Beside a running daemon or none: copies the store to `file` with SQLite's online backup (one
// consistent snapshot, mode 0600: it holds tokens) and prints the copy's ledger size and newest
// transition. Returns the exit code.
int backup_store(const std::filesystem::path& store, const std::filesystem::path& file);

}  // namespace fulfillsync::daemon
