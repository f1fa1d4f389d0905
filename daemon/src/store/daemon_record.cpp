#include "fulfillsync/daemon/store/daemon_record.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include "fulfillsync/common/version.hpp"

namespace fulfillsync::daemon {
namespace {

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

std::optional<std::string> optional_text(const SQLite::Column& column) {
  if (column.isNull()) return std::nullopt;
  return column.getString();
}

}  // namespace

std::optional<long long> process_start_ticks(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // "PID (COMM) STATE ..." where COMM may hold spaces and parentheses: the fields resume after the last ')'.
  const auto end_of_comm = stat.rfind(')');
  if (end_of_comm == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(end_of_comm + 1));
  std::string field;
  for (int number = 3; fields >> field; ++number) {
    if (number == 22) {
      try {
        return std::stoll(field);
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
  }
  return std::nullopt;
}

void record_daemon_start(CheckpointStore& store) {
  const long pid = static_cast<long>(::getpid());
  SQLite::Statement upsert(store.database(),
                           "INSERT INTO daemon_process (id, pid, start_ticks, boot_id, version, started_at) "
                           "VALUES (1, ?1, ?2, ?3, ?4, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) "
                           "ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, start_ticks = excluded.start_ticks, "
                           "boot_id = excluded.boot_id, version = excluded.version, started_at = excluded.started_at, "
                           "stopped_at = NULL, waiting_for = NULL");
  upsert.bind(1, static_cast<int64_t>(pid));
  upsert.bind(2, static_cast<int64_t>(process_start_ticks(pid).value_or(0)));
  upsert.bind(3, boot_id());
  upsert.bind(4, std::string(kVersion));
  upsert.exec();
}

void record_daemon_waiting(CheckpointStore& store, const std::optional<std::string>& what) {
  SQLite::Statement update(store.database(), "UPDATE daemon_process SET waiting_for = ?1 WHERE pid = ?2");
  if (what) {
    update.bind(1, *what);
  } else {
    update.bind(1);
  }
  update.bind(2, static_cast<int64_t>(::getpid()));
  update.exec();
}

void record_daemon_stop(CheckpointStore& store) {
  SQLite::Statement update(store.database(),
                           "UPDATE daemon_process SET stopped_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), "
                           "waiting_for = NULL WHERE pid = ?1");
  update.bind(1, static_cast<int64_t>(::getpid()));
  update.exec();
}

std::optional<DaemonRecord> load_daemon_record(CheckpointStore& store) {
  SQLite::Statement query(store.database(),
                          "SELECT pid, start_ticks, boot_id, version, started_at, stopped_at, waiting_for "
                          "FROM daemon_process WHERE id = 1");
  if (!query.executeStep()) return std::nullopt;
  return DaemonRecord{.pid = static_cast<long>(query.getColumn(0).getInt64()),
                      .start_ticks = query.getColumn(1).getInt64(),
                      .boot_id = query.getColumn(2).getString(),
                      .version = query.getColumn(3).getString(),
                      .started_at = query.getColumn(4).getString(),
                      .stopped_at = optional_text(query.getColumn(5)),
                      .waiting_for = optional_text(query.getColumn(6))};
}

std::optional<long> store_lock_holder(const std::filesystem::path& store) {
  struct stat file {};
  if (::stat(store.c_str(), &file) != 0) return std::nullopt;
  // /proc/locks names a file as MAJOR:MINOR:INODE, the device numbers in hex.
  const std::string file_id = fmt::format(" {:02x}:{:02x}:{} ", major(file.st_dev), minor(file.st_dev), file.st_ino);
  std::ifstream locks("/proc/locks");
  for (std::string line; std::getline(locks, line);) {
    // "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; a blocked waiter's line starts "1: -> FLOCK".
    if (line.find(file_id) == std::string::npos || line.find("-> ") != std::string::npos) continue;
    std::istringstream fields(line);
    std::string number, kind, mode, access;
    long pid = 0;
    if (fields >> number >> kind >> mode >> access >> pid && kind == "FLOCK" && access == "WRITE") return pid;
  }
  return std::nullopt;
}

bool is_running(const DaemonRecord& record, const std::filesystem::path& store) {
  if (record.stopped_at || store_lock_holder(store) != record.pid) return false;
  const auto ticks = process_start_ticks(record.pid);
  return ticks && *ticks == record.start_ticks;
}

}  // namespace fulfillsync::daemon
