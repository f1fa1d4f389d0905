#pragma once
#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fulfillsync::testing {

using namespace std::chrono_literals;

// A fresh directory under $TMPDIR, removed with everything in it when the object goes.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// A program started by a test, its standard output and error captured to files. The destructor
// kills (SIGKILL) and reaps it if it is still running, so no test leaves a process behind, and fails
// the test when its standard error holds a sanitizer report.
class ChildProcess {
 public:
  struct Options {
    std::vector<std::string> argv = {};
    std::vector<std::string> set_env = {};    // NAME=value added to (or replacing in) the test's environment
    std::vector<std::string> unset_env = {};  // names removed from it
    std::filesystem::path working_dir = {};   // empty: the test's own
    // Where standard output and error go; empty: files in a directory of the object's own, removed
    // with it.
    std::filesystem::path stdout_file = {};
    std::filesystem::path stderr_file = {};
  };

  explicit ChildProcess(Options options);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  void send_signal(int signal) const;
  bool running();

  // The exit status (128 + signal number when killed by a signal), or nothing on timeout.
  std::optional<int> wait_for_exit(std::chrono::milliseconds timeout);

  // Waits until a line of standard output (or error) contains `needle` and returns that line.
  std::optional<std::string> wait_for_stdout(std::string_view needle, std::chrono::milliseconds timeout);
  std::optional<std::string> wait_for_stderr(std::string_view needle, std::chrono::milliseconds timeout);

  std::string stdout_text() const;
  std::string stderr_text() const;

  // What the program used (CPU time, peak resident memory), once it has exited and been reaped.
  const rusage& usage() const { return usage_; }

 private:
  std::optional<std::string> wait_for_line(const std::filesystem::path& file, std::string_view needle,
                                           std::chrono::milliseconds timeout);
  TempDir output_dir_;
  std::filesystem::path stdout_file_;
  std::filesystem::path stderr_file_;
  std::string program_;
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
  rusage usage_{};
};

// Runs a program to completion (at most `timeout`, then it is killed) and returns its exit status
// and output.
struct RunResult {
  int exit_status;
  std::string stdout_text;
  std::string stderr_text;
};
RunResult run(ChildProcess::Options options, std::chrono::milliseconds timeout = 60s);
inline RunResult run(std::vector<std::string> argv, std::chrono::milliseconds timeout = 60s) {
  return run(ChildProcess::Options{.argv = std::move(argv)}, timeout);
}

std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, std::string_view content);

// Where the build put a project binary, and where the source tree is.
std::filesystem::path binary_path(std::string_view name);
std::filesystem::path source_path(std::string_view relative);

}  // namespace fulfillsync::testing
