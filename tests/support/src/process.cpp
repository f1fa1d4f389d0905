#include "fulfillsync/testing/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

extern char** environ;

namespace fulfillsync::testing {
namespace {

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

std::vector<std::string> child_environment(const ChildProcess::Options& options) {
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string_view var(*entry);
    const std::string_view name = var.substr(0, var.find('='));
    bool drop = false;
    for (const auto& unset : options.unset_env) drop = drop || name == unset;
    for (const auto& set : options.set_env) drop = drop || name == std::string_view(set).substr(0, set.find('='));
    if (!drop) env.emplace_back(var);
  }
  env.insert(env.end(), options.set_env.begin(), options.set_env.end());
  return env;
}

// Where a sanitizer report starts in a child's standard error (npos: none). Sanitized children are the
// project's own binaries, and their reports must fail the test whatever their exit status.
std::size_t sanitizer_report_start(const std::string& stderr_text) {
  std::size_t start = std::string::npos;
  for (const char* marker : {"==ERROR: ", "WARNING: ThreadSanitizer", ": runtime error: "}) {
    const std::size_t found = stderr_text.find(marker);
    if (found == std::string::npos) continue;
    const std::size_t line = stderr_text.rfind('\n', found);
    start = std::min(start, line == std::string::npos ? 0 : line + 1);
  }
  return start;
}

}  // namespace

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/fulfillsync-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + std::string(strerror(errno)));
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

ChildProcess::ChildProcess(Options options) {
  if (options.argv.empty()) throw std::invalid_argument("ChildProcess needs a program");
  program_ = options.argv.front();
  stdout_file_ = options.stdout_file.empty() ? output_dir_ / "stdout" : options.stdout_file;
  stderr_file_ = options.stderr_file.empty() ? output_dir_ / "stderr" : options.stderr_file;
  std::vector<std::string> env = child_environment(options);
  std::vector<char*> argv_ptrs, env_ptrs;
  for (auto& arg : options.argv) argv_ptrs.push_back(arg.data());
  argv_ptrs.push_back(nullptr);
  for (auto& var : env) env_ptrs.push_back(var.data());
  env_ptrs.push_back(nullptr);

  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    // Only async-signal-safe calls from here on.
    const int out_fd = open(stdout_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err_fd = open(stderr_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (out_fd < 0 || err_fd < 0 || null_fd < 0) _exit(127);
    dup2(null_fd, STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    if (!options.working_dir.empty() && chdir(options.working_dir.c_str()) != 0) _exit(127);
    // The test runner may block signals; the child starts with the defaults.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(argv_ptrs[0], argv_ptrs.data(), env_ptrs.data());
    _exit(127);
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exit_status_) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  const std::string errors = stderr_text();
  if (const std::size_t report = sanitizer_report_start(errors); report != std::string::npos) {
    ADD_FAILURE() << program_ << " (pid " << pid_ << ") reported:\n" << errors.substr(report);
  }
}

void ChildProcess::send_signal(int signal) const {
  // Once reaped, the pid may be another process's.
  if (pid_ > 0 && !exit_status_) kill(pid_, signal);
}

bool ChildProcess::running() {
  if (exit_status_) return false;
  int status = 0;
  const pid_t done = wait4(pid_, &status, WNOHANG, &usage_);
  if (done == pid_) exit_status_ = decode_status(status);
  return !exit_status_;
}

std::optional<int> ChildProcess::wait_for_exit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    // Short: benchmarks time a run to its exit.
    std::this_thread::sleep_for(2ms);
  }
  return exit_status_;
}

std::optional<std::string> ChildProcess::wait_for_line(const std::filesystem::path& file, std::string_view needle,
                                                       std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::istringstream lines(read_file(file));
    for (std::string line; std::getline(lines, line);) {
      if (line.find(needle) != std::string::npos) return line;
    }
    // A process that has exited writes nothing more.
    if (!running() || std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(10ms);
  }
}

std::optional<std::string> ChildProcess::wait_for_stdout(std::string_view needle, std::chrono::milliseconds timeout) {
  return wait_for_line(stdout_file_, needle, timeout);
}

std::optional<std::string> ChildProcess::wait_for_stderr(std::string_view needle, std::chrono::milliseconds timeout) {
  return wait_for_line(stderr_file_, needle, timeout);
}

std::string ChildProcess::stdout_text() const { return read_file(stdout_file_); }
std::string ChildProcess::stderr_text() const { return read_file(stderr_file_); }

RunResult run(ChildProcess::Options options, std::chrono::milliseconds timeout) {
  ChildProcess child(std::move(options));
  auto status = child.wait_for_exit(timeout);
  if (!status) {
    child.send_signal(SIGKILL);
    status = child.wait_for_exit(10s);
  }
  return RunResult{status.value_or(-1), child.stdout_text(), child.stderr_text()};
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

void write_file(const std::filesystem::path& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::filesystem::path binary_path(std::string_view name) {
  return std::filesystem::path(FULFILLSYNC_TEST_BINARY_DIR) / name;
}

std::filesystem::path source_path(std::string_view relative) {
  return std::filesystem::path(FULFILLSYNC_TEST_SOURCE_DIR) / relative;
}

}  // namespace fulfillsync::testing
