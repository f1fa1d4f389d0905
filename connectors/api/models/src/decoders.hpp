#pragma once
// The model decoders, one `read` overload per struct (found by the generic readers through the
// Reader's namespace). Each lives in the decode_<model>.cpp of its header.
#include "fulfillsync/api/models/channel.hpp"
#include "fulfillsync/api/models/estimate.hpp"
#include "fulfillsync/api/models/inventory.hpp"
#include "fulfillsync/api/models/order.hpp"
#include "fulfillsync/api/models/parts.hpp"
#include "fulfillsync/api/models/receiving.hpp"
#include "fulfillsync/api/models/return_order.hpp"
#include "fulfillsync/api/models/shipment.hpp"
#include "json_reader.hpp"

namespace fulfillsync::api::detail {

// parts.hpp
bool read(Reader& reader, od::value& value, Address& out);
bool read(Reader& reader, od::value& value, Recipient& out);
bool read(Reader& reader, od::value& value, Tag& out);
bool read(Reader& reader, od::value& value, IdName& out);
// The address members of an object that also has other members (retailer addresses).
bool read_address_field(Reader& reader, std::string_view key, od::value& value, Address& out, bool& known);

// shipment.hpp
bool read(Reader& reader, od::value& value, Measurements& out);
bool read(Reader& reader, od::value& value, ShipmentInventoryItem& out);
bool read(Reader& reader, od::value& value, ShipmentProduct& out);
bool read(Reader& reader, od::value& value, CartonDetail& out);
bool read(Reader& reader, od::value& value, Carton& out);
bool read(Reader& reader, od::value& value, ParentCarton& out);
bool read(Reader& reader, od::value& value, ShipmentStatusDetail& out);
bool read(Reader& reader, od::value& value, Tracking& out);
bool read(Reader& reader, od::value& value, Shipment& out);
bool read(Reader& reader, od::value& value, TimelineEntry& out);
bool read(Reader& reader, od::value& value, TrackingUploadItemError& out);
bool read(Reader& reader, od::value& value, TrackingUploadResult& out);
bool read(Reader& reader, od::value& value, TrackingUploadSummary& out);
bool read(Reader& reader, od::value& value, TrackingUploadResponse& out);

// order.hpp
bool read(Reader& reader, od::value& value, Financials& out);
bool read(Reader& reader, od::value& value, ShippingTerms& out);
bool read(Reader& reader, od::value& value, RetailerAddress& out);
bool read(Reader& reader, od::value& value, RetailerProgramData& out);
bool read(Reader& reader, od::value& value, OrderProduct& out);
bool read(Reader& reader, od::value& value, Order& out);
bool read(Reader& reader, od::value& value, CreatedOrder& out);

// return_order.hpp
bool read(Reader& reader, od::value& value, ReturnActionRequested& out);
bool read(Reader& reader, od::value& value, ReturnActionTaken& out);
bool read(Reader& reader, od::value& value, ReturnLotInformation& out);
bool read(Reader& reader, od::value& value, ReturnLine& out);
bool read(Reader& reader, od::value& value, ReturnTransaction& out);
bool read(Reader& reader, od::value& value, ReturnInvoice& out);
bool read(Reader& reader, od::value& value, ReturnStatusChange& out);
bool read(Reader& reader, od::value& value, ReturnOrder& out);
bool read(Reader& reader, od::value& value, ReturnList& out);

// inventory.hpp
bool read(Reader& reader, od::value& value, LotLocation& out);
bool read(Reader& reader, od::value& value, Lot& out);
bool read(Reader& reader, od::value& value, LotLevels& out);
bool read(Reader& reader, od::value& value, InventoryDimensions& out);
bool read(Reader& reader, od::value& value, InventoryVariantFlags& out);
bool read(Reader& reader, od::value& value, InventoryWeight& out);
bool read(Reader& reader, od::value& value, InventoryItem& out);
bool read(Reader& reader, od::value& value, VariantCustoms& out);
bool read(Reader& reader, od::value& value, VariantInventory& out);
bool read(Reader& reader, od::value& value, Variant& out);
bool read(Reader& reader, od::value& value, Product& out);
bool read(Reader& reader, od::value& value, ProductList& out);

// channel.hpp
bool read(Reader& reader, od::value& value, Channel& out);
bool read(Reader& reader, od::value& value, ChannelList& out);

// receiving.hpp
bool read(Reader& reader, od::value& value, ReceivingFulfillmentCenter& out);
bool read(Reader& reader, od::value& value, ReceivingInventoryQuantity& out);
bool read(Reader& reader, od::value& value, ReceivingStatusChange& out);
bool read(Reader& reader, od::value& value, ReceivingFreight& out);
bool read(Reader& reader, od::value& value, ReceivingOrder& out);

// estimate.hpp
bool read(Reader& reader, od::value& value, Estimate& out);
bool read(Reader& reader, od::value& value, EstimateResponse& out);

}  // namespace fulfillsync::api::detail
