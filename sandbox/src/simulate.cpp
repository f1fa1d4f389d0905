// POST /simulate/shipment and GET /simulate/status/{id}: scripted shipment progress.
#include "fulfillsync/common/crypto.hpp"
#include "fulfillsync/sandbox/handlers.hpp"
#include "fulfillsync/sandbox/render.hpp"
#include "fulfillsync/sandbox/sandbox.hpp"

namespace fulfillsync::sandbox {
namespace {

constexpr std::size_t kMaxChain = 20;

// Reads `simulation` and its `next` chain into steps.
void read_steps(simdjson::dom::object object, std::string path, Validation& validation,
                std::vector<SimulationStep>& steps) {
  ObjectReader r(object, path, validation);
  SimulationStep step;
  if (auto action = r.string("action", {.required = true, .min_length = 1})) {
    step.action = std::string(*action);
    if (!parse_simulation_action(step.action)) {
      validation.add(r.path("action"), "Unknown action '" + step.action +
                                           "' (PickOrder, PackOrder, LabelOrder, ShipOrder, InTransit, OutForDelivery, "
                                           "DeliverOrder, DeliveryException, OutOfStock, OnHold, CancelOrder).");
    }
  }
  if (auto delay = r.integer("delay", {.min = 0, .max = 525600})) step.delay_minutes = static_cast<int>(*delay);
  steps.push_back(std::move(step));
  if (auto next = r.object("next")) {
    if (steps.size() >= kMaxChain) {
      validation.add(r.path("next"), "A simulation chain has at most " + std::to_string(kMaxChain) + " steps.");
      return;
    }
    read_steps(*next, r.path("next"), validation, steps);
  }
}

// `next` is an object, never null: it is left out after the last step.
void write_next_steps(JsonWriter& w, const Simulation& simulation, std::size_t from) {
  if (from >= simulation.steps.size()) return;
  w.key("next").begin_object().field("action", simulation.steps[from].action)
      .field("delay", simulation.steps[from].delay_minutes);
  write_next_steps(w, simulation, from + 1);
  w.end_object();
}

}  // namespace

HttpResponse simulate_shipment(Call& call) {
  Validation validation;
  const auto object = body_object(call, validation);
  if (!object) return validation_problem(400, validation, call.path());
  ObjectReader r(*object, "", validation);
  std::optional<Id> shipment_id;
  // The spec types shipment_id as a string; an integer is accepted too.
  if (r.present("shipment_id")) {
    simdjson::dom::element value = (*object)["shipment_id"];
    std::string_view text;
    std::int64_t number = 0;
    if (value.get_string().get(text) == simdjson::SUCCESS) {
      shipment_id = parse_int(text);
    } else if (value.get_int64().get(number) == simdjson::SUCCESS) {
      shipment_id = number;
    }
    if (!shipment_id) validation.add("shipment_id", "The field shipment_id must be a shipment id.");
  } else {
    validation.add("shipment_id", "The shipment_id field is required.");
  }
  std::vector<SimulationStep> steps;
  if (auto simulation = r.object("simulation", true)) read_steps(*simulation, "simulation", validation, steps);
  if (!validation.ok()) return validation_problem(400, validation, call.path());

  Order* order = nullptr;
  Shipment* shipment = call.store.find_shipment(*shipment_id, &order);
  if (shipment == nullptr || order->merchant_id != call.principal.merchant_id) {
    return not_found(call, "Shipment " + std::to_string(*shipment_id));
  }
  // From now on the script drives this shipment instead of the automatic schedule.
  shipment->follows_schedule = false;
  ++shipment->generation;

  Simulation simulation;
  simulation.id = crypto::uuid_from(call.sandbox.auth().next_opaque("simulation"));
  simulation.merchant_id = call.principal.merchant_id;
  simulation.shipment_id = shipment->id;
  simulation.steps = std::move(steps);
  simulation.schedule_time = call.now + std::chrono::minutes(simulation.steps.front().delay_minutes);
  const std::string id = simulation.id;
  auto& ids = call.sandbox.simulator().simulation_ids();
  ids.push_back(id);
  call.sandbox.simulator().schedule_simulation(ids.size() - 1, simulation.schedule_time);
  call.store.simulations.emplace(id, std::move(simulation));
  // A step due now applies before the answer, so a caller sees its effect at once.
  call.sandbox.simulator().advance(call.store, call.now);

  JsonWriter w;
  w.begin_object().field("message", "Simulation scheduled.").field("simulation_id", id).end_object();
  return json_response(200, w.take());
}

HttpResponse simulation_status(Call& call) {
  const auto found = call.store.simulations.find(std::string(call.params[0]));
  if (found == call.store.simulations.end() || found->second.merchant_id != call.principal.merchant_id) {
    return not_found(call, "Simulation " + std::string(call.params[0]));
  }
  const Simulation& simulation = found->second;
  const std::size_t shown = std::min(simulation.next_step, simulation.steps.size() - 1);
  JsonWriter w;
  w.begin_object()
      .field("simulation_id", simulation.id)
      .field("entity_id", std::to_string(simulation.shipment_id))
      .field("entity_type", "Shipment")
      .key("simulation")
      .begin_object()
      .field("action", simulation.steps[shown].action)
      .field("message", simulation.message)
      .field("status", simulation.status);
  write_next_steps(w, simulation, shown + 1);
  w.field("schedule_time", timestamps::format_iso8601(simulation.schedule_time)).end_object().end_object();
  return json_response(200, w.take());
}

}  // namespace fulfillsync::sandbox
