#pragma once
// Everything the emulated provider knows, in memory. Ids are dense and sequential so that a
// million orders cost little more than the orders themselves.
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "fulfillsync/sandbox/model.hpp"

namespace fulfillsync::sandbox {

inline constexpr int kDefaultMerchantId = 1;
inline constexpr Id kFirstOrderId = 100001;
inline constexpr Id kFirstShipmentId = 500001;

struct Merchant {
  int id = 0;
  std::string name;
  int default_channel_id = 0;  // read scopes only
  int pat_channel_id = 0;      // read and write scopes, for personal access tokens
  std::vector<int> channel_ids;
  std::vector<Id> order_ids;  // creation order
  std::unordered_map<std::string, Id> order_by_reference;
  std::vector<Id> return_ids;
  std::unordered_map<std::string, Id> return_by_reference;
  std::vector<Id> product_ids;
  std::unordered_map<std::string, Id> product_by_reference;  // order-line reference_id to product
  std::unordered_map<std::string, Id> variant_by_sku;
  std::vector<Id> receiving_ids;
  std::vector<Id> unidentified_receiving_ids;
  std::vector<std::string> shipping_methods{"Standard", "Expedited", "2-Day", "Overnight"};
};

struct Counters {
  Id order = kFirstOrderId;
  Id shipment = kFirstShipmentId;
  Id return_order = 9001;
  Id product = 3001;
  Id variant = 4001;
  Id inventory = 7001;
  Id receiving = 801;
  Id unidentified_receiving = 61;
  Id inventory_event = 1;
  Id channel_metadata = 1;
  int channel = 1;
};

class Store {
 public:
  Store();

  Merchant& merchant(int id);  // created with its two channels on first use
  Merchant* find_merchant(int id);
  const std::map<int, Merchant>& merchants() const { return merchants_; }

  Channel& add_channel(int merchant_id, std::string name, std::string application_name, ScopeSet scopes);
  Channel* find_channel(int id);
  const std::vector<Channel>& channels() const { return channels_; }

  const std::vector<FulfillmentCenter>& fulfillment_centers() const { return fulfillment_centers_; }
  const FulfillmentCenter* find_fulfillment_center(int id) const;

  Order& add_order(Order order);  // assigns ids to the order and its shipments
  Order* find_order(Id id);
  Shipment* find_shipment(Id id, Order** owner = nullptr);
  std::size_t order_count() const { return orders_.size(); }
  std::deque<Order>& orders() { return orders_; }

  std::map<Id, ReturnOrder> returns;
  std::map<Id, Product> products;
  std::unordered_map<Id, Id> product_of_variant;
  std::map<Id, InventoryItem> inventory;
  std::map<Id, ReceivingOrder> receiving_orders;
  std::map<Id, UnidentifiedReceivingOrder> unidentified_receiving_orders;
  std::vector<InventoryEvent> inventory_events;
  std::unordered_map<std::string, Simulation> simulations;
  Counters next;

  Variant* find_variant(Id id, Product** owner = nullptr);
  // Adds a product with its variants; each variant gets an id and an inventory item.
  Product& add_product(Product product);
  void record_inventory_event(int merchant_id, Id inventory_id, std::string type, int change, int location_id,
                              std::string lot, TimePoint at, std::string reference);

 private:
  std::map<int, Merchant> merchants_;
  std::vector<Channel> channels_;  // channel id n is channels_[n - 1]
  std::vector<FulfillmentCenter> fulfillment_centers_;
  std::deque<Order> orders_;  // order id n is orders_[n - kFirstOrderId]
  std::unordered_map<Id, Id> order_of_shipment_;
};

// Fills a store with the `--seed demo` catalogue: products and variants with inventory and lots
// per location, a receiving order in each state, unidentified receiving orders and extra channels.
void seed_demo(Store& store, TimePoint now);

}  // namespace fulfillsync::sandbox
