#pragma once
// Fulfilment on the simulated clock. Shipments walk allocated -> picked -> packed -> labeled ->
// shipped (tracking) -> in transit -> out for delivery -> delivered; returns and receiving orders
// walk their own statuses. Each step is stamped with its scheduled time, not the time it was
// processed, so state depends only on the clock, never on when a request happened to arrive.
#include <chrono>
#include <cstdint>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "fulfillsync/sandbox/store.hpp"

namespace fulfillsync::sandbox {

// The delay before each automatic step of a shipment (documented in sandbox/README.md).
std::chrono::seconds automatic_step_delay(Stage from);
std::optional<Stage> automatic_next(Stage from);

// Reserves (sign 1) or releases (sign -1) the stock of an order's lines at a location.
void commit_stock(Store& store, const Order& order, int location_id, int sign);

// /simulate/shipment actions, e.g. "ShipOrder" (case-insensitive).
std::optional<Stage> parse_simulation_action(std::string_view action);

class Simulator {
 public:
  // Stores a new order whose shipments have their location and dates set: they are allocated
  // (timeline, stock committed) and start their automatic schedule.
  Order& place_order(Store& store, Order order);

  // Starts the automatic schedule of a new shipment, a new return or a new receiving order.
  void schedule(const Shipment& shipment);
  void schedule(const ReturnOrder& return_order);
  void schedule(const ReceivingOrder& receiving_order);
  // Queues the next step of a /simulate/shipment chain.
  void schedule_simulation(std::size_t simulation_index, TimePoint at);

  // Applies every step due at or before `now`, in time order.
  void advance(Store& store, TimePoint now);

  // Moves a shipment to `stage` at `at`: tracking, dates, timeline, order status, stock. Fails
  // (and says why) for a move the warehouse could not make, e.g. a delivered shipment back to picked.
  static bool move_shipment(Store& store, Order& order, Shipment& shipment, Stage stage, TimePoint at,
                            std::string& why);
  static void refresh_order_status(Order& order, TimePoint at);

  std::vector<std::string>& simulation_ids() { return simulation_ids_; }
  void clear();

 private:
  enum class Kind : std::uint8_t { shipment, return_order, receiving, simulation };
  struct Due {
    TimePoint at;
    Kind kind;
    std::uint32_t generation;
    Id id;
    bool operator>(const Due& other) const { return at > other.at || (at == other.at && id > other.id); }
  };
  void step_shipment(Store& store, const Due& due);
  void step_return(Store& store, const Due& due);
  void step_receiving(Store& store, const Due& due);
  void step_simulation(Store& store, const Due& due);

  std::priority_queue<Due, std::vector<Due>, std::greater<>> due_;
  std::vector<std::string> simulation_ids_;  // index -> Simulation id
};

}  // namespace fulfillsync::sandbox
