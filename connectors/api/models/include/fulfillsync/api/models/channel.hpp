#pragma once
// Channels (`GET /channel`): the daemon picks the one with write scopes for `service_channel_id`.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fulfillsync::api {

struct Channel {
  std::int64_t id = 0;
  std::optional<std::string> name{}, application_name{};
  std::vector<std::string> scopes{};

  bool has_scope(std::string_view scope) const { return std::ranges::find(scopes, scope) != scopes.end(); }
};

struct ChannelList {
  std::vector<Channel> items{};
  std::optional<std::string> next{}, prev{};  // page URLs
};

}  // namespace fulfillsync::api
