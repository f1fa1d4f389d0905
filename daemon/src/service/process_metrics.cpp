#include "service/process_metrics.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fulfillsync::daemon {
namespace {

// Fields of /proc/self/stat after the command name, which may itself hold spaces and parentheses.
std::vector<std::string> stat_fields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  std::getline(in, line);
  std::vector<std::string> fields;
  const std::size_t after_name = line.rfind(')');
  if (after_name == std::string::npos) return fields;
  std::istringstream rest(line.substr(after_name + 1));
  for (std::string field; rest >> field;) fields.push_back(field);
  return fields;  // fields[0] is the state (field 3 of proc(5))
}

double field_as_double(const std::vector<std::string>& fields, std::size_t proc_field_number) {
  const std::size_t index = proc_field_number - 3;
  return index < fields.size() ? std::stod(fields[index]) : 0.0;
}

double boot_time_seconds() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double value = 0;
      in >> value;
      return value;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

prometheus::MetricFamily family(const char* name, const char* help, prometheus::MetricType type, double value) {
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) metric.counter.value = value;
  else metric.gauge.value = value;
  return prometheus::MetricFamily{name, help, type, {metric}};
}

}  // namespace

ProcessMetrics::ProcessMetrics() {
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  start_time_seconds_ = boot_time_seconds() + field_as_double(stat_fields(), 22) / ticks;
}

std::vector<prometheus::MetricFamily> ProcessMetrics::Collect() const {
  using prometheus::MetricType;
  const auto fields = stat_fields();
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page_size = static_cast<double>(::sysconf(_SC_PAGESIZE));
  const double cpu_seconds = (field_as_double(fields, 14) + field_as_double(fields, 15)) / ticks;

  double open_fds = 0;
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    ++open_fds;
  }
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);

  return {
      family("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", MetricType::Counter,
             cpu_seconds),
      family("process_resident_memory_bytes", "Resident memory size in bytes.", MetricType::Gauge,
             field_as_double(fields, 24) * page_size),
      family("process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricType::Gauge,
             field_as_double(fields, 23)),
      family("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", MetricType::Gauge,
             start_time_seconds_),
      family("process_open_fds", "Number of open file descriptors.", MetricType::Gauge, open_fds),
      family("process_max_fds", "Maximum number of open file descriptors.", MetricType::Gauge,
             static_cast<double>(limit.rlim_cur)),
  };
}

}  // namespace fulfillsync::daemon
