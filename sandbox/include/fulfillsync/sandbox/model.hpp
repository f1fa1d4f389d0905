#pragma once
// The sandbox's entities: what a merchant's account at the provider holds. Rendering them as JSON
// per API version lives in render.hpp; their life cycle on the clock in simulation.hpp.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fulfillsync/common/timestamps.hpp"

namespace fulfillsync::sandbox {

using timestamps::TimePoint;
using Id = std::int64_t;

// API versions, oldest first; comparisons express "from version X".
enum class Version { v2025_07, v2026_01, v2026_07 };
std::optional<Version> parse_version(std::string_view text);
std::string_view version_name(Version version);

// Scopes as bits so a permission check is one AND.
enum class Scope : std::uint32_t {
  billing_read, channels_read, fulfillments_read, fulfillments_write, inventory_read, inventory_write,
  locations_read, locations_write, orders_read, orders_write, pricing_read, products_read, products_write,
  receiving_read, receiving_write, returns_read, returns_write, webhooks_read, webhooks_write, openid,
  offline_access, count
};
using ScopeSet = std::uint32_t;
constexpr ScopeSet bit(Scope scope) { return ScopeSet{1} << static_cast<std::uint32_t>(scope); }
std::string_view scope_name(Scope scope);
std::optional<Scope> parse_scope(std::string_view name);
ScopeSet all_read_scopes();
ScopeSet all_write_scopes();
std::vector<std::string_view> scope_names(ScopeSet scopes);
// Scopes separated by spaces or commas; on an unknown name returns nothing and sets `unknown`.
std::optional<ScopeSet> parse_scope_list(std::string_view text, std::string& unknown);

struct Channel {
  int id = 0;
  int merchant_id = 0;
  std::string name;
  std::string application_name;
  ScopeSet scopes = 0;
  bool can_write() const { return (scopes & all_write_scopes()) != 0; }
};

struct FulfillmentCenter {
  int id = 0;
  std::string name, address1, address2, city, state, zip_code, country, email, phone_number, timezone;
};

// Stock of one lot at one fulfillment center.
struct LotLevel {
  std::string lot_number;
  std::optional<TimePoint> lot_date;
  int location_id = 0;
  // 64 bits: many orders of large quantities must not overflow.
  std::int64_t on_hand = 0;
  std::int64_t committed = 0;
  std::int64_t awaiting = 0;
  std::int64_t internal_transfer = 0;
  std::int64_t fulfillable() const { return on_hand > committed ? on_hand - committed : 0; }
  // Holds nothing: not listed, as if absent (shipping or a cancel can leave one behind).
  bool empty() const { return on_hand == 0 && committed == 0 && awaiting == 0 && internal_transfer == 0; }
};

struct InventoryItem {
  Id id = 0;
  int merchant_id = 0;
  std::string name, sku, barcode;
  bool is_lot = false;
  bool is_case = false;
  bool is_active = true;   // the variant's status is Active
  bool is_digital = false;
  double weight_oz = 8;
  double length_in = 6, width_in = 4, height_in = 2;
  std::vector<LotLevel> lots;
  std::int64_t on_hand() const;
};

struct ChannelMetadata {
  Id id = 0;
  int channel_id = 0;
  std::string channel_name;
  double price = 0;
  std::string seller_sku;
};

struct Variant {
  Id id = 0;
  Id product_id = 0;
  Id inventory_id = 0;
  std::string name, sku, gtin, upc, status = "Active";
  TimePoint created_on{};
  TimePoint updated_on{};
  double customs_value = 0;  // an integer before 2026-07
  std::string customs_country_of_origin = "US", customs_currency = "USD", customs_description, customs_hs_tariff_code;
  double weight_oz = 8;
  double length_in = 6, width_in = 4, height_in = 2;
  bool is_lot = false;
  bool is_digital = false;
  int minimum_shelf_life_days = 0;
  int packaging_requirement_id = 0;
  std::vector<ChannelMetadata> channel_metadata;
};

// An inventory item describes its variant: name, sku, barcode, lot tracking, measures, status.
// Called when the variant is created and whenever it changes, so the two never disagree.
void describe_inventory_item(InventoryItem& item, const Variant& variant);

// The product taxonomy (GET /taxonomy/{id}; a product's `taxonomy` is its node and the parent).
struct TaxonomyNode {
  int id;
  int parent;
  std::string_view name;
  std::string_view path;
};
const TaxonomyNode* find_taxonomy(std::int64_t id);
std::span<const TaxonomyNode> taxonomy_nodes();

// Name of a packaging requirement id as GET /packaging-requirement lists it ("None" for 0).
std::string_view packaging_requirement_name(int id);

// The ship option an order's shipping_method maps to: a method naming one of the service's ship
// options (case-insensitively) maps to it; any other gets a new mapping that defaults to Standard.
std::string_view ship_option_for(std::string_view shipping_method);

struct Product {
  Id id = 0;
  int merchant_id = 0;
  // `string | null` both (the spec's Product): a PATCH may clear them. A name is required to create
  // a product, so "" is a name cleared since (answered as null).
  std::string name;
  std::optional<std::string> type = "Regular";
  std::string reference_id;  // the client's identifier when created from an order line
  TimePoint created_on{};
  std::optional<TimePoint> updated_on;
  int taxonomy_id = 0;
  std::vector<Variant> variants;
};

// A product line of an order as received and resolved against the catalogue.
struct OrderLine {
  Id product_id = 0;
  Id inventory_id = 0;
  std::string reference_id, sku, name;
  int quantity = 0;
  std::optional<Id> external_line_id;
  std::string unit_of_measure;
  std::optional<double> unit_price;
  std::string lot_number;
};

// Shipment progress, in order; the automatic schedule walks Allocated..Delivered.
enum class Stage : std::uint8_t {
  allocated, picked, packed, labeled, awaiting_carrier_scan, in_transit, out_for_delivery, delivered,
  delivery_exception, out_of_stock, on_hold, cancelled
};
std::string_view stage_status(Stage stage);       // shipment `status`
std::optional<int> stage_detail_id(Stage stage);  // status_details[].id
std::string_view stage_detail_name(Stage stage);
bool stage_shipped(Stage stage);  // left the warehouse: cancel refused

// One step of a shipment's history; its log type, name and text derive from the stage.
struct TimelineEntry {
  TimePoint at{};
  Stage stage = Stage::allocated;
};

struct Shipment {
  Id id = 0;
  Id order_id = 0;
  int location_id = 0;
  Stage stage = Stage::allocated;
  bool follows_schedule = true;  // false once /simulate/shipment drives it
  bool is_tracking_uploaded = false;
  std::uint32_t generation = 0;  // bumped on each change, so stale scheduled steps are skipped
  // Successful requests that set is_tracking_uploaded to true (admin view: tests prove "marked once").
  std::uint32_t tracking_upload_marks = 0;
  TimePoint created{};
  TimePoint last_update_at{};
  // Set when the shipment leaves the warehouse; it then has tracking (see tracking_number()).
  std::optional<TimePoint> actual_fulfillment_date;
  std::optional<TimePoint> last_tracking_update_at, delivery_date;
  TimePoint estimated_fulfillment_date{};
  std::vector<TimelineEntry> timeline;
};

// Tracking exists once a shipment has shipped; the simulated carrier (USPS Ground Advantage)
// numbers it after the shipment, so nothing more is stored per shipment.
inline bool has_tracking(const Shipment& shipment) { return shipment.actual_fulfillment_date.has_value(); }
std::string tracking_number(const Shipment& shipment);

enum class OrderStatus : std::uint8_t { processing, exception, partially_fulfilled, fulfilled, cancelled, import_review };
std::string_view order_status_name(OrderStatus status);

struct Order {
  Id id = 0;
  int merchant_id = 0;
  int channel_id = 0;
  std::string reference_id;
  std::optional<std::string> order_number, gift_message, origin_platform_program, sales_channel;
  std::optional<TimePoint> purchase_date;
  std::string shipping_method;
  std::string type = "DTC";
  std::string recipient_json;  // minified, echoed back
  std::string recipient_name;
  std::optional<std::string> total_price;  // exact number text
  std::optional<std::string> retailer_program_data_json, shipping_terms_json, tags_json;
  OrderStatus status = OrderStatus::processing;
  TimePoint created{};
  TimePoint last_update{};  // the latest of creation, cancel and shipment updates (for the filters)
  std::vector<OrderLine> lines;
  std::vector<Shipment> shipments;
  std::uint32_t cancels_processed = 0;  // cancel requests answered 200 (admin view: exactly-once proofs)
};

enum class ReturnStatus : std::uint8_t { awaiting_arrival, arrived, processing, completed, cancelled };
std::string_view return_status_name(ReturnStatus status);

struct ReturnLine {
  Id inventory_id = 0;
  std::string name, sku;
  int quantity = 0;
  std::string requested_action;
  std::string lot_number;
  std::optional<TimePoint> lot_date;
  int quantity_processed = 0;
};

struct ReturnOrder {
  Id id = 0;
  int merchant_id = 0;
  int channel_id = 0;
  std::string reference_id;
  int fulfillment_center_id = 0;
  std::optional<Id> original_shipment_id;
  std::optional<std::string> tracking_number;
  std::optional<std::string> tags_json;
  std::optional<std::string> store_order_id;
  std::optional<std::string> customer_name;
  std::string return_type = "Regular";
  int creation_source_id = 0;
  ReturnStatus status = ReturnStatus::awaiting_arrival;
  std::uint32_t generation = 0;
  TimePoint insert_date{};
  std::optional<TimePoint> arrived_date, processing_date, completed_date, cancelled_date;
  std::vector<std::pair<ReturnStatus, TimePoint>> history;
  std::vector<ReturnLine> lines;
};

enum class WroStatus : std::uint8_t {
  awaiting, processing, completed, cancelled, incomplete, arrived, partially_arrived, partially_arrived_at_hub,
  arrived_at_hub, processing_at_hub, internal_transfer
};
std::string_view wro_status_name(WroStatus status);

struct WroLine {
  Id inventory_id = 0;
  std::string sku;
  int expected = 0, received = 0, stowed = 0;
  std::string lot_number;
  std::optional<TimePoint> lot_date;
};

struct WroBox {
  std::optional<std::string> tracking_number;
  std::vector<std::size_t> line_indexes;
};

struct Freight {
  std::string carrier, bol_number, container_number, vessel_name, freight_forwarder, notes;
};

struct ReceivingOrder {
  Id id = 0;
  int merchant_id = 0;
  int fulfillment_center_id = 0;
  std::optional<int> final_destination_fulfillment_center_id;
  std::string package_type = "Package";
  std::string box_packaging_type = "EverythingInOneBox";
  std::optional<std::string> purchase_order_number;
  WroStatus status = WroStatus::awaiting;
  std::uint32_t generation = 0;
  TimePoint expected_arrival_date{}, insert_date{}, last_updated_date{};
  bool is_external_sync = false;
  std::optional<TimePoint> external_sync_timestamp;
  std::vector<std::pair<WroStatus, TimePoint>> history;
  std::vector<WroLine> lines;
  std::vector<WroBox> boxes;
  std::optional<Freight> freight;
};

// Inbound stock that arrived without a WRO (2026-07).
struct UnidentifiedReceivingOrder {
  Id id = 0;
  int merchant_id = 0;
  int fulfillment_center_id = 0;
  TimePoint arrived_date{};
  std::string tracking_number;
  std::string notes;
  std::optional<Id> wro_id;
  std::optional<TimePoint> completed_date;
  std::vector<std::string> attachment_names;
};

// One change of on-hand stock, for POST /inventory/history:query.
struct InventoryEvent {
  Id id = 0;
  int merchant_id = 0;
  Id inventory_id = 0;
  std::string event_type;  // Receiving, OrderPick, Adjustment, Restock
  int quantity_change = 0;
  int location_id = 0;
  std::string lot_number;
  TimePoint at{};
  std::string reference;
};

struct SimulationStep {
  std::string action;
  int delay_minutes = 0;
};

// A /simulate/shipment chain of steps applied to one shipment.
struct Simulation {
  std::string id;  // UUID
  int merchant_id = 0;
  Id shipment_id = 0;
  std::vector<SimulationStep> steps;
  std::size_t next_step = 0;
  TimePoint schedule_time{};
  std::string status = "Scheduled";  // Scheduled, Completed, Failed
  std::string message;
};

}  // namespace fulfillsync::sandbox
