#include "fulfillsync/testing/sandbox.hpp"

#include <signal.h>

#include <stdexcept>

namespace fulfillsync::testing {

Sandbox::Sandbox(std::vector<std::string> extra_args, std::uint16_t port, std::filesystem::path program) {
  std::vector<std::string> argv = {program.string(),
                                   "--listen", "127.0.0.1:" + std::to_string(port), "--token", kToken,
                                   "--admin-token", kAdminToken,
                                   "--seed", "demo", "--rate-limit", "off"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  process_ = std::make_unique<ChildProcess>(ChildProcess::Options{.argv = std::move(argv)});
  const auto line = process_->wait_for_stdout("listening on ", 30s);
  if (!line) {
    throw std::runtime_error("fulfillsync-sandbox did not start:\n" + process_->stdout_text() +
                             process_->stderr_text());
  }
  base_url_ = line->substr(line->find("listening on ") + 13);
  port_ = static_cast<std::uint16_t>(std::stoi(base_url_.substr(base_url_.rfind(':') + 1)));
}

Sandbox::~Sandbox() {
  process_->send_signal(SIGTERM);
  process_->wait_for_exit(10s);
}

HttpResponse Sandbox::admin(std::string_view method, std::string_view path, std::string_view body) const {
  return http_request("127.0.0.1", port_, method, path, {{"X-Sandbox-Admin-Token", kAdminToken}}, body);
}

}  // namespace fulfillsync::testing
