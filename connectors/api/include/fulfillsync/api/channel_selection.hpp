#pragma once
// Which channel the daemon's creating calls name in `service_channel_id`: the configured one,
// checked, or else the one whose scopes allow writing orders.
#include <cstdint>
#include <optional>
#include <string>

#include "fulfillsync/api/client.hpp"

namespace fulfillsync::api {

struct ChannelSelection {
  enum class Status {
    selected,
    no_writable_channel,    // the token sees no channel with orders_write
    configured_not_found,   // api.channel_id is not among the token's channels
    configured_read_only,   // api.channel_id lacks orders_write
    authentication_failed,  // 401 or 403 on GET /channel
    certificate_refused,    // the provider's TLS certificate failed verification (api.ca_file, api.base_url)
    unavailable,            // the provider could not be asked; try again later
  };
  Status status = Status::unavailable;
  std::int32_t channel_id = 0;
  std::string message;  // for the operator: what was found and what to do

  // Whether asking again could change the answer without an operator's help.
  bool transient() const { return status == Status::unavailable; }
};

// Lists every channel (following `next` links) and chooses. Sets the client's channel on success.
boost::asio::awaitable<ChannelSelection> select_channel(ApiClient& client, std::optional<std::int32_t> configured);

}  // namespace fulfillsync::api
