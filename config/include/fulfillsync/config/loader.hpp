#pragma once
#include <filesystem>
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

// Loads and validates the file. Throws ConfigError listing every problem.
Config load_file(const std::filesystem::path& path);

// The same for YAML text; `name` stands for the file in diagnostics.
Config load_string(std::string_view yaml, std::string_view name);

}  // namespace fulfillsync::config
