#pragma once
// Word from the merchant database that its source tables changed, so that the push jobs read them at
// once rather than at the end of their interval (whose polling stays as the safety net).
//
// PostgreSQL: the reference triggers NOTIFY the channel `fulfillsync_changes` on every commit that
// changes a source table (schema/merchant/postgresql/change_order/0001_change_xid.sql); a listener on
// its own connection LISTENs on it, driven by the caller's Asio loop (libpq's socket, non-blocking: no
// thread). SQLite has no such word: there is no listener, and the polling alone finds changes.
#include <memory>

#include "fulfillsync/common/asio.hpp"
#include "fulfillsync/config/config.hpp"

namespace fulfillsync::merchant {

// The channel the reference triggers notify.
inline constexpr const char* kChangeChannel = "fulfillsync_changes";

class ChangeNotifications {
 public:
  enum class Event {
    // Listening: at the start, or again after a loss. Changes made while it was down went unheard:
    // the tables are worth reading now.
    listening,
    // The connection was lost (or could not be opened): it is opened again with a doubling back-off.
    lost,
    // One or more notifications, all that had arrived (coalesced).
    changed,
  };

  virtual ~ChangeNotifications() = default;

  // The next event. The database's failures are never thrown: they are `lost`, then retried. Safe to
  // abandon at any await (the loop stopped); the listener's destructor closes the connection.
  virtual boost::asio::awaitable<Event> next() = 0;
};

// The listener for the configured database, on `executor`; nothing for a driver without
// notifications (SQLite). Does not connect yet: the first next() does.
std::unique_ptr<ChangeNotifications> listen_for_changes(const config::MerchantConfig& config,
                                                        boost::asio::any_io_executor executor);

}  // namespace fulfillsync::merchant
