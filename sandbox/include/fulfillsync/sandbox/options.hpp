#pragma once
// The command line of fulfillsync-sandbox (documented in sandbox/README.md).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fulfillsync::sandbox {

struct SandboxOptions {
  std::string listen_host = "127.0.0.1";
  std::uint16_t listen_port = 0;
  // Personal access tokens of the default merchant: --token, --token-file, FULFILLSYNC_SANDBOX_TOKEN.
  std::vector<std::string> tokens;
  // --admin-token(-file), else FULFILLSYNC_SANDBOX_ADMIN_TOKEN; without it the admin path answers 404.
  std::optional<std::string> admin_token;
  std::optional<std::string> state_file;    // SQLite journal; state survives a restart
  std::optional<std::string> seed;          // "demo"
  int rate_limit_per_minute = 150;          // 0: off
  std::optional<std::string> tls_cert, tls_key;
  std::uint64_t fault_seed = 1;
  std::string faults;
  double clock_speed = 1.0;
  int read_timeout_seconds = 30;            // a request must arrive whole within this
  std::size_t max_body_bytes = 1024 * 1024;
  std::string log_level = "info";
  // Every exchange is appended here as one JSON line (--exchange-log FILE, else
  // FULFILLSYNC_SANDBOX_EXCHANGE_DIR/sandbox-<pid>.jsonl), for contract checks of the answers.
  std::optional<std::string> exchange_log;
};

// Parses argv (reading token files and the FULFILLSYNC_SANDBOX_* token variables); on error,
// --help or --version returns nothing and writes the message to `message` (`exit_code` 2 for
// errors, 0 otherwise).
std::optional<SandboxOptions> parse_command_line(int argc, char** argv, std::string& message, int& exit_code);

}  // namespace fulfillsync::sandbox
