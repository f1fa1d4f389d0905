#include "cli/recover_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/daemon/store/outbound_ledger.hpp"
#include "service/service.hpp"

namespace fulfillsync::daemon {
namespace {

constexpr std::array<const char*, 2> kSideFiles = {"-wal", "-shm"};

std::filesystem::path with_suffix(const std::filesystem::path& path, std::string_view suffix) {
  return std::filesystem::path(path.string() + std::string(suffix));
}

// Holds the store's lock while it is moved, so that a running daemon's store is never moved.
class StoreLock {
 public:
  explicit StoreLock(const std::filesystem::path& path) : fd_(::open(path.c_str(), O_RDWR | O_CLOEXEC)) {
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      ::close(fd_);
      fd_ = -1;
      throw CheckpointStoreError(
          error == EWOULDBLOCK
              ? fmt::format("checkpoint store {} is in use by a running fulfillsyncd: stop it first", path.string())
              : fmt::format("checkpoint store {}: {}", path.string(), std::strerror(error)));
    }
  }
  ~StoreLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;

 private:
  int fd_;
};

}  // namespace

std::string damaged_store_advice(const CheckpointStoreDamaged& damage, const std::filesystem::path& config_path) {
  return fmt::format("{}; restarting does not mend it. Stop the service and run `fulfillsyncd --config {} "
                     "recover-store`: it moves the file aside and rebuilds the store from the merchant's result "
                     "tables (README: \"A damaged checkpoint store\")",
                     damage.what(), config_path.string());
}

int recover_store(const CommandLine& line, config::Config config) {
  const std::filesystem::path store = config.checkpoint.path;
  try {
    std::error_code error;
    if (std::filesystem::exists(store, error)) {
      const StoreLock lock(store);
      const std::string stamp =
          fmt::format("{:%Y%m%dT%H%M%SZ}", std::chrono::time_point_cast<std::chrono::seconds>(timestamps::Clock::now()));
      const std::filesystem::path aside = with_suffix(store, ".damaged-" + stamp);
      std::filesystem::rename(store, aside);
      for (const char* side : kSideFiles) {
        if (std::filesystem::exists(with_suffix(store, side))) {
          std::filesystem::rename(with_suffix(store, side), with_suffix(aside, side));
        }
      }
      std::cout << fmt::format("moved {} aside to {}\n", store.string(), aside.string()) << std::flush;
    } else {
      std::cout << fmt::format("{} does not exist; creating a fresh store\n", store.string()) << std::flush;
    }
  } catch (const std::exception& e) {
    spdlog::critical("recover-store: {}", e.what());
    return exit_code::unavailable;
  }
  std::unique_ptr<Service> service;
  try {
    service = std::make_unique<Service>(line.config_path, std::move(config), line.log_level, Service::Mode::rebuild);
  } catch (const std::exception& e) {
    spdlog::critical("recover-store: cannot start: {}", e.what());
    return exit_code::unavailable;
  }
  return service->run();
}

int backup_store(const std::filesystem::path& store, const std::filesystem::path& file) {
  const std::filesystem::path partial = with_suffix(file, ".partial");
  try {
    std::error_code error;
    if (std::filesystem::equivalent(store, file, error)) {
      throw CheckpointStoreError(fmt::format("backup: {} is the store itself", file.string()));
    }
    std::filesystem::remove(partial);
    // Created here for its mode: the copy holds the OAuth tokens.
    const int fd = ::open(partial.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) throw CheckpointStoreError(fmt::format("backup: {}: {}", partial.string(), std::strerror(errno)));
    ::close(fd);
    {
      CheckpointStore source(store, CheckpointStore::Access::read_only);
      // One step: the whole copy is read in one transaction, a snapshot of one moment of the store.
      source.database().backup(partial.c_str(), SQLite::Database::Save);
    }
    std::filesystem::rename(partial, file);
    CheckpointStore copy(file, CheckpointStore::Access::read_only);
    OutboundLedger ledger(copy);
    const auto [size, newest] = ledger.size_and_newest();
    std::cout << fmt::format("backup {}: {} ledger entries, newest transition {}, schema version {}\n", file.string(),
                             size, newest.empty() ? "(none)" : newest, copy.schema_version());
  } catch (const std::exception& e) {
    std::filesystem::remove(partial);
    spdlog::critical("backup: {}", e.what());
    return exit_code::unavailable;
  }
  return exit_code::ok;
}

}  // namespace fulfillsync::daemon
