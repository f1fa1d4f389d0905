#include "fulfillsync/common/logging.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace fulfillsync::logging {
namespace {

class SyslogPriorityFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    fmt::format_to(std::back_inserter(dest), "<{}>", syslog_priority(msg.level));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<SyslogPriorityFlag>();
  }
};

}  // namespace

Destination detect_destination() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return Destination::terminal;
  unsigned long long device = 0, inode = 0;
  if (std::sscanf(stream, "%llu:%llu", &device, &inode) != 2) return Destination::terminal;
  struct stat st {};
  if (fstat(STDERR_FILENO, &st) != 0) return Destination::terminal;
  return (st.st_dev == device && st.st_ino == inode) ? Destination::journal : Destination::terminal;
}

void init(Destination destination, spdlog::level::level_enum level) {
  std::shared_ptr<spdlog::logger> logger;
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (destination == Destination::journal) {
    logger = std::make_shared<spdlog::logger>("fulfillsync", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    formatter->add_flag<SyslogPriorityFlag>('*').set_pattern("%*%v");
  } else {
    logger = std::make_shared<spdlog::logger>("fulfillsync", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    formatter->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%-7l%$ %v");
  }
  logger->set_formatter(std::move(formatter));
  logger->set_level(level);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
}

std::optional<spdlog::level::level_enum> parse_level(std::string_view name) {
  using spdlog::level::level_enum;
  if (name == "trace") return level_enum::trace;
  if (name == "debug") return level_enum::debug;
  if (name == "info") return level_enum::info;
  if (name == "warn" || name == "warning") return level_enum::warn;
  if (name == "error") return level_enum::err;
  if (name == "critical") return level_enum::critical;
  if (name == "off") return level_enum::off;
  return std::nullopt;
}

int syslog_priority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug: return 7;
    case spdlog::level::info: return 6;
    case spdlog::level::warn: return 4;
    case spdlog::level::err: return 3;
    case spdlog::level::critical: return 2;
    default: return 6;
  }
}

}  // namespace fulfillsync::logging
