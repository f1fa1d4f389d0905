#include "fulfillsync/api/channel_selection.hpp"

#include <fmt/format.h>

#include "fulfillsync/api/provider.hpp"

namespace fulfillsync::api {
namespace asio = boost::asio;

namespace {

constexpr std::string_view kWriteScope = "orders_write";

std::string describe(const Channel& channel) {
  return fmt::format("{} ({})", channel.id, channel.name.value_or("unnamed"));
}

}  // namespace

asio::awaitable<ChannelSelection> select_channel(ApiClient& client, std::optional<std::int32_t> configured) {
  using Status = ChannelSelection::Status;
  Provider provider(client);
  const Answer<std::vector<Channel>> listed = co_await provider.channels();
  const Outcome& outcome = listed.outcome;
  if (outcome.kind == OutcomeKind::unauthorized || outcome.kind == OutcomeKind::forbidden) {
    co_return ChannelSelection{Status::authentication_failed, 0,
                               fmt::format("GET /channel was refused ({}): check the API token", outcome.detail)};
  }
  if (outcome.certificate_refused) co_return ChannelSelection{Status::certificate_refused, 0, outcome.detail};
  if (!outcome.ok()) {
    co_return ChannelSelection{Status::unavailable, 0,
                               fmt::format("GET /channel failed: {} ({})", to_string(outcome.kind), outcome.detail)};
  }
  if (!listed) {
    co_return ChannelSelection{Status::unavailable, 0,
                               fmt::format("GET /channel answered an unreadable body: {}", listed.why())};
  }
  const std::vector<Channel>& channels = *listed;

  if (configured) {
    for (const Channel& channel : channels) {
      if (channel.id != *configured) continue;
      if (!channel.has_scope(kWriteScope)) {
        co_return ChannelSelection{Status::configured_read_only, 0,
                                   fmt::format("api.channel_id {} has no {} scope; use a channel created with a "
                                               "personal access token or an app granted write scopes",
                                               describe(channel), kWriteScope)};
      }
      client.set_channel(*configured);
      co_return ChannelSelection{Status::selected, *configured, fmt::format("using channel {}", describe(channel))};
    }
    co_return ChannelSelection{Status::configured_not_found, 0,
                               fmt::format("api.channel_id {} is not among the {} channels this token sees",
                                           *configured, channels.size())};
  }
  for (const Channel& channel : channels) {
    if (channel.has_scope(kWriteScope) && channel.id > 0 && channel.id <= INT32_MAX) {
      client.set_channel(static_cast<std::int32_t>(channel.id));
      co_return ChannelSelection{Status::selected, static_cast<std::int32_t>(channel.id),
                                 fmt::format("using channel {}, the first with {}", describe(channel), kWriteScope)};
    }
  }
  co_return ChannelSelection{Status::no_writable_channel, 0,
                             fmt::format("none of the {} channels this token sees has the {} scope; a read-only "
                                         "token cannot create orders",
                                         channels.size(), kWriteScope)};
}

}  // namespace fulfillsync::api
