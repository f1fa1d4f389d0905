#include "fulfillsync/sandbox/options.hpp"

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <unistd.h>
#include <string_view>

#include "fulfillsync/common/version.hpp"

namespace fulfillsync::sandbox {
namespace {

constexpr std::string_view kUsage = R"(usage: fulfillsync-sandbox --listen HOST:PORT [options]

A stateful local emulator of the fulfillment provider's API (see sandbox/README.md).

  --listen HOST:PORT     address to serve on; port 0 picks a free port. Prints
                         "listening on http://HOST:PORT" (https with TLS) once accepting.
  --token TOKEN          a personal access token of the default merchant (repeatable; visible
                         in ps: prefer --token-file or FULFILLSYNC_SANDBOX_TOKEN)
  --token-file FILE      the same, one token a line ('#' comments and blank lines skipped;
                         repeatable)
  --admin-token TOKEN    enables /_sandbox/... for requests with X-Sandbox-Admin-Token: TOKEN
  --admin-token-file FILE  the same, the file's one token
  --state FILE           keep state in a SQLite file; it survives a restart
  --seed demo            start with the demo catalogue
  --rate-limit N|off     requests per minute per token (default 150, as production)
  --tls-cert FILE        serve HTTPS with this PEM certificate chain ...
  --tls-key FILE         ... and this PEM private key
  --fault-seed N         seed of the fault dice (default 1)
  --faults SPEC          inject faults (grammar in sandbox/README.md)
  --clock-speed X        simulated time runs X times faster (default 1)
  --read-timeout S       seconds a client has to send a whole request (default 30)
  --max-body BYTES       largest accepted request body (default 1048576)
  --log-level LEVEL      trace, debug, info, warn, error, off (default info)
  --exchange-log FILE    append every request and its answer to FILE, one JSON line each
  -V, --version          show the version
  --help                 this text

Environment: FULFILLSYNC_SANDBOX_TOKEN adds one token of the default merchant;
FULFILLSYNC_SANDBOX_ADMIN_TOKEN is the admin token unless the command line gives one;
FULFILLSYNC_SANDBOX_EXCHANGE_DIR=DIR logs exchanges to DIR/sandbox-PID.jsonl unless --exchange-log is given.
)";

constexpr const char* kTokenVariable = "FULFILLSYNC_SANDBOX_TOKEN";
constexpr const char* kAdminTokenVariable = "FULFILLSYNC_SANDBOX_ADMIN_TOKEN";
constexpr const char* kExchangeDirVariable = "FULFILLSYNC_SANDBOX_EXCHANGE_DIR";

template <typename T>
bool parse_number(std::string_view text, T& value) {
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  return result.ec == std::errc{} && result.ptr == text.data() + text.size();
}

// The tokens of a token file: one a line, surrounding white space trimmed, blank lines and
// '#' comments skipped. Returns an error text, or nothing when the file gave at least one token.
std::optional<std::string> read_token_file(const std::string& path, std::vector<std::string>& tokens) {
  std::ifstream file(path);
  if (!file) return "cannot read '" + path + "'";
  const auto before = tokens.size();
  constexpr std::string_view kBlank = " \t\r";
  for (std::string line; std::getline(file, line);) {
    const auto first = line.find_first_not_of(kBlank);
    if (first == std::string::npos || line[first] == '#') continue;
    tokens.push_back(line.substr(first, line.find_last_not_of(kBlank) + 1 - first));
  }
  if (file.bad()) return "cannot read '" + path + "'";
  if (tokens.size() == before) return "'" + path + "' holds no token";
  return std::nullopt;
}

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

}  // namespace

std::optional<SandboxOptions> parse_command_line(int argc, char** argv, std::string& message, int& exit_code) {
  SandboxOptions options;
  bool listen_given = false;
  exit_code = 2;
  const auto fail = [&](std::string text) {
    message = "fulfillsync-sandbox: " + text + "\n(see --help)";
    return std::nullopt;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      message = std::string(kUsage);
      exit_code = 0;
      return std::nullopt;
    }
    if (arg == "--version" || arg == "-V") {
      message = std::string("fulfillsync-sandbox ") + kVersion;
      exit_code = 0;
      return std::nullopt;
    }
    std::string_view name = arg;
    std::optional<std::string_view> inline_value;
    if (const auto equals = arg.find('='); arg.starts_with("--") && equals != std::string_view::npos) {
      name = arg.substr(0, equals);
      inline_value = arg.substr(equals + 1);
    }
    const auto value = [&]() -> std::optional<std::string_view> {
      if (inline_value) return inline_value;
      if (i + 1 >= argc) return std::nullopt;
      return std::string_view(argv[++i]);
    };
    const auto known = {"--listen", "--token", "--token-file", "--admin-token", "--admin-token-file", "--state",
                        "--seed", "--rate-limit", "--tls-cert", "--tls-key", "--fault-seed", "--faults",
                        "--clock-speed", "--read-timeout", "--max-body", "--log-level", "--exchange-log"};
    bool recognised = false;
    for (const auto* option : known) recognised = recognised || name == option;
    if (!recognised) return fail("unknown option '" + std::string(arg) + "'");
    const auto text = value();
    if (!text) return fail(std::string(name) + " needs a value");
    if (name == "--listen") {
      const auto colon = text->rfind(':');
      if (colon == std::string_view::npos) return fail("--listen: expected HOST:PORT, got '" + std::string(*text) + "'");
      std::string host(text->substr(0, colon));
      if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
      unsigned port = 0;
      if (host.empty() || !parse_number(text->substr(colon + 1), port) || port > 65535) {
        return fail("--listen: expected HOST:PORT with a port from 0 to 65535, got '" + std::string(*text) + "'");
      }
      options.listen_host = host;
      options.listen_port = static_cast<std::uint16_t>(port);
      listen_given = true;
    } else if (name == "--token") {
      if (text->empty()) return fail("--token: a token cannot be empty");
      options.tokens.emplace_back(*text);
    } else if (name == "--token-file") {
      if (auto error = read_token_file(std::string(*text), options.tokens)) return fail("--token-file: " + *error);
    } else if (name == "--admin-token") {
      if (text->empty()) return fail("--admin-token: the token cannot be empty");
      options.admin_token = std::string(*text);
    } else if (name == "--admin-token-file") {
      std::vector<std::string> admin;
      if (auto error = read_token_file(std::string(*text), admin)) return fail("--admin-token-file: " + *error);
      if (admin.size() > 1) return fail("--admin-token-file: '" + std::string(*text) + "' holds more than one token");
      options.admin_token = admin.front();
    } else if (name == "--state") {
      options.state_file = std::string(*text);
    } else if (name == "--seed") {
      if (*text != "demo") return fail("--seed: the only seed is 'demo'");
      options.seed = std::string(*text);
    } else if (name == "--rate-limit") {
      if (*text == "off") {
        options.rate_limit_per_minute = 0;
      } else if (!parse_number(*text, options.rate_limit_per_minute) || options.rate_limit_per_minute < 1) {
        return fail("--rate-limit: expected a positive number of requests per minute or 'off'");
      }
    } else if (name == "--tls-cert") {
      options.tls_cert = std::string(*text);
    } else if (name == "--tls-key") {
      options.tls_key = std::string(*text);
    } else if (name == "--fault-seed") {
      if (!parse_number(*text, options.fault_seed)) return fail("--fault-seed: expected a non-negative integer");
    } else if (name == "--faults") {
      options.faults = std::string(*text);
    } else if (name == "--clock-speed") {
      if (!parse_number(*text, options.clock_speed) || !(options.clock_speed > 0) || options.clock_speed > 1e6) {
        return fail("--clock-speed: expected a number above 0 (at most 1000000)");
      }
    } else if (name == "--read-timeout") {
      if (!parse_number(*text, options.read_timeout_seconds) || options.read_timeout_seconds < 1) {
        return fail("--read-timeout: expected a positive number of seconds");
      }
    } else if (name == "--max-body") {
      if (!parse_number(*text, options.max_body_bytes) || options.max_body_bytes < 1024) {
        return fail("--max-body: expected a number of bytes, at least 1024");
      }
    } else if (name == "--log-level") {
      options.log_level = std::string(*text);
    } else if (name == "--exchange-log") {
      options.exchange_log = std::string(*text);
    }
  }
  if (!listen_given) return fail("--listen HOST:PORT is required");
  if (auto token = environment(kTokenVariable)) options.tokens.push_back(std::move(*token));
  if (!options.admin_token) options.admin_token = environment(kAdminTokenVariable);
  if (!options.exchange_log) {
    if (auto dir = environment(kExchangeDirVariable)) {
      options.exchange_log = *dir + "/sandbox-" + std::to_string(getpid()) + ".jsonl";
    }
  }
  if (options.tls_cert.has_value() != options.tls_key.has_value()) {
    return fail("--tls-cert and --tls-key go together");
  }
  return options;
}

}  // namespace fulfillsync::sandbox
