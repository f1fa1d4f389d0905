#pragma once
// Where the bearer token comes from. The token itself is never logged or exported.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "fulfillsync/common/asio.hpp"

namespace fulfillsync::api {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // The token to send now; nothing when none can be had (the caller reports unauthorized).
  virtual boost::asio::awaitable<std::optional<std::string>> access_token() = 0;
  // Called once after a 401. True when a different token is now available to try.
  virtual boost::asio::awaitable<bool> refresh() = 0;
  // "personal access token", "oauth": for logs.
  virtual std::string_view kind() const = 0;
};

// A personal access token read from a file (a systemd credential, typically). Such tokens do not
// expire; after a 401 the file is read again, in case an operator rotated it.
class PersonalAccessToken final : public TokenSource {
 public:
  // Throws std::runtime_error when the file cannot be read or is empty.
  explicit PersonalAccessToken(std::filesystem::path file);
  boost::asio::awaitable<std::optional<std::string>> access_token() override;
  boost::asio::awaitable<bool> refresh() override;
  std::string_view kind() const override { return "personal access token"; }

 private:
  std::filesystem::path file_;
  std::string token_;
};

// The first line of a token file, without surrounding white space. Throws std::runtime_error.
std::string read_token_file(const std::filesystem::path& file);

}  // namespace fulfillsync::api
