#include "fulfillsync/api/token_source.hpp"

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace fulfillsync::api {

std::string read_token_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("cannot read token file {}", file.string()));
  std::string line;
  std::getline(in, line);
  const auto first = line.find_first_not_of(" \t\r");
  const auto last = line.find_last_not_of(" \t\r");
  if (first == std::string::npos) throw std::runtime_error(fmt::format("token file {} is empty", file.string()));
  return line.substr(first, last - first + 1);
}

PersonalAccessToken::PersonalAccessToken(std::filesystem::path file)
    : file_(std::move(file)), token_(read_token_file(file_)) {}

boost::asio::awaitable<std::optional<std::string>> PersonalAccessToken::access_token() { co_return token_; }

boost::asio::awaitable<bool> PersonalAccessToken::refresh() {
  try {
    std::string fresh = read_token_file(file_);
    if (fresh == token_) co_return false;
    token_ = std::move(fresh);
    co_return true;
  } catch (const std::runtime_error&) {
    co_return false;
  }
}

}  // namespace fulfillsync::api
