#include "fulfillsync/sandbox/simulation.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace fulfillsync::sandbox {
namespace {

using namespace std::chrono_literals;

bool on_normal_path(Stage stage) { return stage <= Stage::delivered; }

// The lot an order line draws from at a location: the first one with enough stock, else the first.
LotLevel& lot_at(InventoryItem& item, int location_id, int quantity) {
  LotLevel* first = nullptr;
  for (auto& lot : item.lots) {
    if (lot.location_id != location_id) continue;
    if (lot.fulfillable() >= quantity) return lot;
    if (first == nullptr) first = &lot;
  }
  if (first != nullptr) return *first;
  LotLevel empty;
  empty.location_id = location_id;
  item.lots.push_back(empty);
  return item.lots.back();
}

void add_timeline(Shipment& shipment, Stage stage, TimePoint at) { shipment.timeline.push_back({at, stage}); }

void ship_stock(Store& store, const Order& order, const Shipment& shipment, TimePoint at) {
  for (const auto& line : order.lines) {
    auto item = store.inventory.find(line.inventory_id);
    if (item == store.inventory.end()) continue;
    LotLevel& lot = lot_at(item->second, shipment.location_id, line.quantity);
    lot.on_hand = std::max<std::int64_t>(0, lot.on_hand - line.quantity);
    lot.committed = std::max<std::int64_t>(0, lot.committed - line.quantity);
    store.record_inventory_event(order.merchant_id, line.inventory_id, "OrderPick", -line.quantity,
                                 shipment.location_id, lot.lot_number, at, "order " + std::to_string(order.id));
  }
}

}  // namespace

void commit_stock(Store& store, const Order& order, int location_id, int sign) {
  for (const auto& line : order.lines) {
    auto item = store.inventory.find(line.inventory_id);
    if (item == store.inventory.end()) continue;
    LotLevel& lot = lot_at(item->second, location_id, line.quantity);
    lot.committed = std::max<std::int64_t>(0, lot.committed + sign * line.quantity);
  }
}

std::chrono::seconds automatic_step_delay(Stage from) {
  switch (from) {
    case Stage::allocated: return 60s;
    case Stage::picked: return 60s;
    case Stage::packed: return 60s;
    case Stage::labeled: return 120s;
    case Stage::awaiting_carrier_scan: return 1h;
    case Stage::in_transit: return 24h;
    case Stage::out_for_delivery: return 4h;
    default: return 0s;
  }
}

std::optional<Stage> automatic_next(Stage from) {
  if (from >= Stage::delivered) return std::nullopt;
  return static_cast<Stage>(static_cast<int>(from) + 1);
}

std::optional<Stage> parse_simulation_action(std::string_view action) {
  std::string lower;
  for (char c : action) {
    if (c != '_' && c != '-' && c != ' ') lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (lower == "pickorder" || lower == "pick") return Stage::picked;
  if (lower == "packorder" || lower == "pack") return Stage::packed;
  if (lower == "labelorder" || lower == "label") return Stage::labeled;
  if (lower == "shiporder" || lower == "ship") return Stage::awaiting_carrier_scan;
  if (lower == "intransit") return Stage::in_transit;
  if (lower == "outfordelivery") return Stage::out_for_delivery;
  if (lower == "deliverorder" || lower == "deliver") return Stage::delivered;
  if (lower == "deliveryexception") return Stage::delivery_exception;
  if (lower == "outofstock" || lower == "exception") return Stage::out_of_stock;
  if (lower == "onhold" || lower == "hold") return Stage::on_hold;
  if (lower == "cancelorder" || lower == "cancel") return Stage::cancelled;
  return std::nullopt;
}

bool Simulator::move_shipment(Store& store, Order& order, Shipment& shipment, Stage stage, TimePoint at,
                              std::string& why) {
  const Stage current = shipment.stage;
  const auto refuse = [&](std::string reason) {
    const auto described = [](Stage which) {
      return stage_detail_id(which) ? fmt::format("{}/{}", stage_status(which), stage_detail_name(which))
                                    : std::string(stage_status(which));
    };
    why = fmt::format("shipment {} cannot move from {} to {}: {}", shipment.id, described(current), described(stage),
                      reason);
    return false;
  };
  if (current == Stage::cancelled) return refuse("it is cancelled");
  if (current == Stage::delivered) return refuse("it is delivered");
  const bool shipped = stage_shipped(current);
  if (stage == Stage::cancelled && shipped) return refuse("it has already shipped");
  if ((stage == Stage::out_of_stock || stage == Stage::on_hold) && shipped) return refuse("it has already shipped");
  if (stage == Stage::delivery_exception && !shipped) return refuse("it has not shipped");
  if (on_normal_path(stage) && on_normal_path(current) && stage <= current) return refuse("that is a step back");
  if (on_normal_path(stage) && current == Stage::delivery_exception && !stage_shipped(stage)) {
    return refuse("that is a step back");
  }

  if (stage_shipped(stage) && !has_tracking(shipment)) {
    shipment.actual_fulfillment_date = at;
    ship_stock(store, order, shipment, at);
  }
  if (stage_shipped(stage)) shipment.last_tracking_update_at = at;
  if (stage == Stage::delivered) shipment.delivery_date = at;
  if (stage == Stage::cancelled) commit_stock(store, order, shipment.location_id, -1);
  shipment.stage = stage;
  shipment.last_update_at = at;
  ++shipment.generation;
  add_timeline(shipment, stage, at);
  refresh_order_status(order, at);
  return true;
}

void Simulator::refresh_order_status(Order& order, TimePoint at) {
  std::size_t shipped = 0, cancelled = 0, troubled = 0;
  for (const auto& shipment : order.shipments) {
    if (stage_shipped(shipment.stage)) ++shipped;
    if (shipment.stage == Stage::cancelled) ++cancelled;
    if (shipment.stage == Stage::out_of_stock || shipment.stage == Stage::on_hold) ++troubled;
  }
  const std::size_t total = order.shipments.size();
  if (total > 0 && cancelled == total) {
    order.status = OrderStatus::cancelled;
  } else if (troubled > 0) {
    order.status = OrderStatus::exception;
  } else if (total > 0 && shipped + cancelled == total) {
    order.status = OrderStatus::fulfilled;
  } else if (shipped > 0) {
    order.status = OrderStatus::partially_fulfilled;
  } else {
    order.status = OrderStatus::processing;
  }
  if (at > order.last_update) order.last_update = at;
}

Order& Simulator::place_order(Store& store, Order order) {
  Order& stored = store.add_order(std::move(order));
  for (auto& shipment : stored.shipments) {
    add_timeline(shipment, Stage::allocated, shipment.created);
    commit_stock(store, stored, shipment.location_id, 1);
    schedule(shipment);
  }
  return stored;
}

void Simulator::schedule(const Shipment& shipment) {
  due_.push({shipment.created + automatic_step_delay(Stage::allocated), Kind::shipment, shipment.generation,
             shipment.id});
}

void Simulator::schedule(const ReturnOrder& return_order) {
  due_.push({return_order.insert_date + 24h, Kind::return_order, return_order.generation, return_order.id});
}

void Simulator::schedule(const ReceivingOrder& receiving_order) {
  const TimePoint arrival = std::max(receiving_order.expected_arrival_date, receiving_order.insert_date + 1h);
  due_.push({arrival, Kind::receiving, receiving_order.generation, receiving_order.id});
}

void Simulator::schedule_simulation(std::size_t simulation_index, TimePoint at) {
  due_.push({at, Kind::simulation, 0, static_cast<Id>(simulation_index)});
}

void Simulator::clear() {
  due_ = {};
  simulation_ids_.clear();
}

void Simulator::advance(Store& store, TimePoint now) {
  while (!due_.empty() && due_.top().at <= now) {
    const Due due = due_.top();
    due_.pop();
    switch (due.kind) {
      case Kind::shipment: step_shipment(store, due); break;
      case Kind::return_order: step_return(store, due); break;
      case Kind::receiving: step_receiving(store, due); break;
      case Kind::simulation: step_simulation(store, due); break;
    }
  }
}

void Simulator::step_shipment(Store& store, const Due& due) {
  Order* order = nullptr;
  Shipment* shipment = store.find_shipment(due.id, &order);
  if (shipment == nullptr || !shipment->follows_schedule || shipment->generation != due.generation) return;
  const auto next = automatic_next(shipment->stage);
  if (!next) return;
  std::string why;
  if (!move_shipment(store, *order, *shipment, *next, due.at, why)) return;
  if (automatic_next(*next)) {
    due_.push({due.at + automatic_step_delay(*next), Kind::shipment, shipment->generation, shipment->id});
  }
}

void Simulator::step_return(Store& store, const Due& due) {
  auto found = store.returns.find(due.id);
  if (found == store.returns.end() || found->second.generation != due.generation) return;
  ReturnOrder& ret = found->second;
  switch (ret.status) {
    case ReturnStatus::awaiting_arrival:
      ret.status = ReturnStatus::arrived;
      ret.arrived_date = due.at;
      due_.push({due.at + 2h, Kind::return_order, ++ret.generation, ret.id});
      break;
    case ReturnStatus::arrived:
      ret.status = ReturnStatus::processing;
      ret.processing_date = due.at;
      due_.push({due.at + 4h, Kind::return_order, ++ret.generation, ret.id});
      break;
    case ReturnStatus::processing:
      ret.status = ReturnStatus::completed;
      ret.completed_date = due.at;
      ++ret.generation;
      for (auto& line : ret.lines) {
        line.quantity_processed = line.quantity;
        if (line.requested_action != "Restock") continue;
        auto item = store.inventory.find(line.inventory_id);
        if (item == store.inventory.end()) continue;
        LotLevel& lot = lot_at(item->second, ret.fulfillment_center_id, 0);
        lot.on_hand += line.quantity;
        store.record_inventory_event(ret.merchant_id, line.inventory_id, "Restock", line.quantity,
                                     ret.fulfillment_center_id, lot.lot_number, due.at,
                                     "return " + std::to_string(ret.id));
      }
      break;
    default: return;
  }
  ret.history.emplace_back(ret.status, due.at);
}

void Simulator::step_receiving(Store& store, const Due& due) {
  auto found = store.receiving_orders.find(due.id);
  if (found == store.receiving_orders.end() || found->second.generation != due.generation) return;
  ReceivingOrder& wro = found->second;
  switch (wro.status) {
    case WroStatus::awaiting:
      wro.status = WroStatus::arrived;
      due_.push({due.at + 2h, Kind::receiving, ++wro.generation, wro.id});
      break;
    case WroStatus::arrived:
      wro.status = WroStatus::processing;
      due_.push({due.at + 6h, Kind::receiving, ++wro.generation, wro.id});
      break;
    case WroStatus::processing:
      wro.status = WroStatus::completed;
      ++wro.generation;
      for (auto& line : wro.lines) {
        line.received = line.expected;
        line.stowed = line.expected;
        auto item = store.inventory.find(line.inventory_id);
        if (item == store.inventory.end()) continue;
        LotLevel* target = nullptr;
        for (auto& lot : item->second.lots) {
          if (lot.location_id == wro.fulfillment_center_id && lot.lot_number == line.lot_number) target = &lot;
        }
        if (target == nullptr) {
          LotLevel lot;
          lot.location_id = wro.fulfillment_center_id;
          lot.lot_number = line.lot_number;
          lot.lot_date = line.lot_date;
          item->second.lots.push_back(lot);
          target = &item->second.lots.back();
        }
        target->on_hand += line.expected;
        target->awaiting = std::max<std::int64_t>(0, target->awaiting - line.expected);
        store.record_inventory_event(wro.merchant_id, line.inventory_id, "Receiving", line.expected,
                                     wro.fulfillment_center_id, line.lot_number, due.at,
                                     "receiving order " + std::to_string(wro.id));
      }
      break;
    default: return;
  }
  wro.last_updated_date = due.at;
  wro.history.emplace_back(wro.status, due.at);
}

void Simulator::step_simulation(Store& store, const Due& due) {
  const auto index = static_cast<std::size_t>(due.id);
  if (index >= simulation_ids_.size()) return;
  auto found = store.simulations.find(simulation_ids_[index]);
  if (found == store.simulations.end()) return;
  Simulation& simulation = found->second;
  if (simulation.status != "Scheduled" || simulation.next_step >= simulation.steps.size()) return;
  const SimulationStep& step = simulation.steps[simulation.next_step];
  Order* order = nullptr;
  Shipment* shipment = store.find_shipment(simulation.shipment_id, &order);
  const auto stage = parse_simulation_action(step.action);
  std::string why;
  if (shipment == nullptr || !stage) {
    simulation.status = "Failed";
    simulation.message = "shipment " + std::to_string(simulation.shipment_id) + " no longer exists";
    return;
  }
  if (!move_shipment(store, *order, *shipment, *stage, due.at, why)) {
    simulation.status = "Failed";
    simulation.message = why;
    return;
  }
  simulation.message = "Action " + step.action + " applied to shipment " + std::to_string(shipment->id);
  ++simulation.next_step;
  if (simulation.next_step >= simulation.steps.size()) {
    simulation.status = "Completed";
    return;
  }
  simulation.schedule_time = due.at + std::chrono::minutes(simulation.steps[simulation.next_step].delay_minutes);
  schedule_simulation(index, simulation.schedule_time);
}

}  // namespace fulfillsync::sandbox
