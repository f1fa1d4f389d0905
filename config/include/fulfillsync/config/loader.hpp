#pragma once
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/config/config.hpp"

namespace fulfillsync::config {

// One problem in a configuration file. Lines and columns count from 1; 0 means the problem is not
// at a place in the file (it could not be read).
struct Diagnostic {
  std::string file;
  int line = 0;
  int column = 0;
  std::string key_path;  // e.g. "api.token_file"; empty for syntax errors
  std::string message;

  // "file:line:column: key.path: message"
  std::string to_string() const;
};

// Every problem found in a file, all at once.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

// Why a secret file cannot be used: missing, not a regular file, readable by group or others,
// unreadable, or empty. Nothing when it can.
std::optional<std::string> secret_file_problem(const std::filesystem::path& file);

// Whether the secret files (api.token_file, api.oauth.client_secret_file) are checked: present, a
// regular file, private to their owner, readable and not empty. Commands that never use the token
// (status, retry, resync) skip them, so that they work for an operator who cannot read it.
enum class Secrets { check, skip };

// Loads and validates the file. Throws ConfigError listing every problem.
//
// Outside systemd (CREDENTIALS_DIRECTORY unset), a path `${CREDENTIALS_DIRECTORY}/NAME` names the
// file the packaged unit loads as credential NAME: `NAME` beside the configuration file for
// `fulfillsync.yaml` (fulfillsyncd.service), `INSTANCE.NAME` for `INSTANCE.yaml`
// (fulfillsyncd@INSTANCE.service). Config::notes says so.
Config load_file(const std::filesystem::path& path, Secrets secrets = Secrets::check);

// The same for YAML text; `name` stands for the file in diagnostics.
Config load_string(std::string_view yaml, std::string_view name, Secrets secrets = Secrets::check);

}  // namespace fulfillsync::config
