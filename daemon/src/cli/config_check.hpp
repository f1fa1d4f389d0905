#pragma once
// `fulfillsyncd check-config`, like `nginx -t`: checks what `run` would meet with a configuration
// that loads, without starting anything and without writing anywhere: the merchant database
// (read-only), the result tables, the checkpoint store's directory, the secret files and the
// starting point; with `online`, also the provider (GET /channel).
#include <string>
#include <vector>

#include "fulfillsync/config/config.hpp"

namespace fulfillsync::daemon {

struct ConfigCheck {
  enum class Level { ok, warning, error };
  Level level;
  std::string subject;  // the key or the thing checked
  std::string message;  // the reason; for a warning or an error, the fix as well
};

std::vector<ConfigCheck> check_configuration(const config::Config& config, bool online);

// "OK    subject: message", "WARN  ...", "ERROR ...".
std::string format_check(const ConfigCheck& check);

}  // namespace fulfillsync::daemon
