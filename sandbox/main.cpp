// fulfillsync-sandbox: a stateful local emulator of the fulfillment provider's API.
#include <cstdio>
#include <exception>

#include <spdlog/spdlog.h>

#include "fulfillsync/common/logging.hpp"
#include "fulfillsync/sandbox/options.hpp"
#include "fulfillsync/sandbox/sandbox.hpp"
#include "fulfillsync/sandbox/server.hpp"

int main(int argc, char** argv) {
  using namespace fulfillsync;
  std::string message;
  int exit_code = 0;
  const auto options = sandbox::parse_command_line(argc, argv, message, exit_code);
  if (!options) {
    std::fprintf(exit_code == 0 ? stdout : stderr, "%s\n", message.c_str());
    return exit_code;
  }
  const auto level = logging::parse_level(options->log_level);
  if (!level) {
    std::fprintf(stderr, "fulfillsync-sandbox: unknown --log-level '%s'\n", options->log_level.c_str());
    return 2;
  }
  logging::init(logging::detect_destination(), *level);
  try {
    sandbox::Sandbox emulator(*options);
    return sandbox::serve(emulator, *options);
  } catch (const std::exception& error) {
    spdlog::critical("{}", error.what());
    return 1;
  }
}
