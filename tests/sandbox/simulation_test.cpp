// Fulfilment on the simulated clock, /simulate/shipment chains, and returns progressing.
#include <thread>

#include <gtest/gtest.h>

#include "sandbox_fixture.hpp"

namespace fulfillsync::sandbox_test {
namespace {

using namespace std::chrono_literals;

simdjson::dom::element shipment_of(const Sandbox& sandbox, std::int64_t order_id) {
  return parse(sandbox.get("/2026-01/order/" + std::to_string(order_id)).body)["shipments"].at(0);
}

std::string detail_of(simdjson::dom::element shipment) {
  simdjson::dom::array details = shipment["status_details"];
  return details.size() == 0 ? "" : as_string(details.at(0)["name"]);
}

TEST(SandboxSimulation, ShipmentsMoveThroughTheirStatusesOnTheClock) {
  Sandbox sandbox;
  const auto order = sandbox.create_order("SIM-CLOCK");
  const auto id = as_int(order["id"]);
  const std::string created_update = as_string(order["shipments"].at(0)["last_update_at"]);

  sandbox.advance_clock(60);
  auto shipment = shipment_of(sandbox, id);
  EXPECT_EQ(as_string(shipment["status"]), "Processing");
  EXPECT_EQ(detail_of(shipment), "Picked");
  EXPECT_EQ(as_int(shipment["status_details"].at(0)["id"]), 100);
  EXPECT_NE(as_string(shipment["last_update_at"]), created_update);

  sandbox.advance_clock(120);
  shipment = shipment_of(sandbox, id);
  EXPECT_EQ(as_string(shipment["status"]), "LabeledCreated");
  EXPECT_EQ(detail_of(shipment), "Labeled");
  EXPECT_EQ(shipment["tracking"].error(), simdjson::NO_SUCH_FIELD);

  sandbox.advance_clock(120);  // 300 s: shipped
  shipment = shipment_of(sandbox, id);
  EXPECT_EQ(as_string(shipment["status"]), "Completed");
  EXPECT_EQ(detail_of(shipment), "AwaitingCarrierScan");
  EXPECT_FALSE(as_string(shipment["tracking"]["tracking_number"]).empty());
  EXPECT_EQ(as_string(shipment["tracking"]["carrier"]), "USPS");
  EXPECT_FALSE(shipment["last_tracking_update_at"].is_null());
  EXPECT_FALSE(shipment["actual_fulfillment_date"].is_null());
  EXPECT_EQ(as_string(parse(sandbox.get("/2026-01/order/" + std::to_string(id)).body)["status"]), "Fulfilled");
  const std::string first_tracking_update = as_string(shipment["last_tracking_update_at"]);

  sandbox.advance_clock(3600);
  shipment = shipment_of(sandbox, id);
  EXPECT_EQ(detail_of(shipment), "InTransit");
  EXPECT_NE(as_string(shipment["last_tracking_update_at"]), first_tracking_update);
  sandbox.advance_clock(24 * 3600);
  EXPECT_EQ(detail_of(shipment_of(sandbox, id)), "OutForDelivery");
  sandbox.advance_clock(4 * 3600);
  shipment = shipment_of(sandbox, id);
  EXPECT_EQ(detail_of(shipment), "Delivered");
  EXPECT_EQ(as_int(shipment["status_details"].at(0)["id"]), 203);
  EXPECT_FALSE(shipment["delivery_date"].is_null());
}

TEST(SandboxSimulation, ClockSpeedRunsSimulatedTimeFaster) {
  Sandbox sandbox({"--clock-speed", "2000"});
  const auto id = as_int(sandbox.create_order("SIM-FAST")["id"]);
  // 300 simulated seconds pass in 0.15 s of real time; poll rather than time anything.
  std::string status;
  for (int i = 0; i < 200 && status != "Completed"; ++i) {
    std::this_thread::sleep_for(50ms);
    status = as_string(shipment_of(sandbox, id)["status"]);
  }
  EXPECT_EQ(status, "Completed");
}

TEST(SandboxSimulation, SimulateShipmentRunsAChainOfActions) {
  Sandbox sandbox;
  const auto order = sandbox.create_order("SIM-CHAIN");
  const auto order_id = as_int(order["id"]);
  const std::string shipment_id = std::to_string(as_int(order["shipments"].at(0)["id"]));
  const auto started = sandbox.call("POST", "/2026-01/simulate/shipment",
      R"({"shipment_id":")" + shipment_id + R"(","simulation":{"action":"ShipOrder","delay":0,"next":{"action":"DeliverOrder","delay":30}}})");
  ASSERT_EQ(started.status, 200) << started.body;
  const std::string simulation_id = as_string(parse(started.body)["simulation_id"]);
  EXPECT_EQ(simulation_id.size(), 36u);
  EXPECT_EQ(as_string(shipment_of(sandbox, order_id)["status"]), "Completed");

  auto status = parse(sandbox.get("/2026-01/simulate/status/" + simulation_id).body);
  EXPECT_EQ(as_string(status["entity_id"]), shipment_id);
  EXPECT_EQ(as_string(status["entity_type"]), "Shipment");
  EXPECT_EQ(as_string(status["simulation"]["status"]), "Scheduled");
  EXPECT_EQ(as_string(status["simulation"]["action"]), "DeliverOrder");
  EXPECT_FALSE(as_string(status["simulation"]["schedule_time"]).empty());

  // The script, not the automatic schedule, drives the shipment now.
  sandbox.advance_clock(29 * 60);
  EXPECT_EQ(detail_of(shipment_of(sandbox, order_id)), "AwaitingCarrierScan");
  sandbox.advance_clock(60);
  EXPECT_EQ(detail_of(shipment_of(sandbox, order_id)), "Delivered");
  status = parse(sandbox.get("/2026-01/simulate/status/" + simulation_id).body);
  EXPECT_EQ(as_string(status["simulation"]["status"]), "Completed");
  EXPECT_EQ(status["simulation"]["next"].error(), simdjson::NO_SUCH_FIELD);  // no step left
}

TEST(SandboxSimulation, AnImpossibleStepFailsTheSimulationWithAReason) {
  Sandbox sandbox;
  const auto order = sandbox.create_order("SIM-FAIL");
  const std::string order_id = std::to_string(as_int(order["id"]));
  const std::string shipment_id = std::to_string(as_int(order["shipments"].at(0)["id"]));
  ASSERT_EQ(sandbox.call("POST", "/2026-01/order/" + order_id + ":cancel").status, 200);
  const auto started = sandbox.call("POST", "/2026-01/simulate/shipment",
      R"({"shipment_id":)" + shipment_id + R"(,"simulation":{"action":"DeliverOrder"}})");
  ASSERT_EQ(started.status, 200);
  const auto status = parse(sandbox.get("/2026-01/simulate/status/" + as_string(parse(started.body)["simulation_id"])).body);
  EXPECT_EQ(as_string(status["simulation"]["status"]), "Failed");
  EXPECT_NE(as_string(status["simulation"]["message"]).find("cancelled"), std::string::npos);
}

TEST(SandboxSimulation, ExceptionAndHoldActionsSetTheOrderToException) {
  Sandbox sandbox;
  const auto order = sandbox.create_order("SIM-EXC");
  const auto order_id = as_int(order["id"]);
  const std::string shipment_id = std::to_string(as_int(order["shipments"].at(0)["id"]));
  ASSERT_EQ(sandbox.call("POST", "/2026-01/simulate/shipment",
                         R"({"shipment_id":")" + shipment_id + R"(","simulation":{"action":"OutOfStock"}})").status, 200);
  const auto shipment = shipment_of(sandbox, order_id);
  EXPECT_EQ(as_string(shipment["status"]), "Exception");
  EXPECT_EQ(as_int(shipment["status_details"].at(0)["id"]), 303);
  EXPECT_EQ(as_string(parse(sandbox.get("/2026-01/order/" + std::to_string(order_id)).body)["status"]), "Exception");
}

TEST(SandboxSimulation, BadSimulationRequestsAreRefused) {
  Sandbox sandbox;
  const auto shipment_id = std::to_string(as_int(sandbox.create_order("SIM-BAD")["shipments"].at(0)["id"]));
  const auto unknown_action = sandbox.call("POST", "/2026-01/simulate/shipment",
      R"({"shipment_id":")" + shipment_id + R"(","simulation":{"action":"Teleport"}})");
  EXPECT_EQ(unknown_action.status, 400);
  EXPECT_EQ(error_fields(unknown_action), std::vector<std::string>{"simulation.action"});
  const auto no_shipment = sandbox.call("POST", "/2026-01/simulate/shipment", R"({"simulation":{"action":"ShipOrder"}})");
  EXPECT_EQ(error_fields(no_shipment), std::vector<std::string>{"shipment_id"});
  EXPECT_EQ(sandbox.call("POST", "/2026-01/simulate/shipment", R"({"shipment_id":"999999","simulation":{"action":"ShipOrder"}})").status, 404);
  EXPECT_EQ(sandbox.get("/2026-01/simulate/status/00000000-0000-4000-8000-000000000000").status, 404);
}

}  // namespace
}  // namespace fulfillsync::sandbox_test
