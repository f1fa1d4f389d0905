#include "decoders.hpp"

namespace fulfillsync::api::detail {
namespace {

// The five quantities sit beside other members in lots and locations.
bool read_quantity_field(Reader& reader, std::string_view key, od::value& value, LotQuantities& out) {
  if (key == "awaiting_quantity") return read(reader, value, out.awaiting_quantity);
  if (key == "committed_quantity") return read(reader, value, out.committed_quantity);
  if (key == "fulfillable_quantity") return read(reader, value, out.fulfillable_quantity);
  if (key == "internal_transfer_quantity") return read(reader, value, out.internal_transfer_quantity);
  if (key == "on_hand_quantity") return read(reader, value, out.on_hand_quantity);
  return true;
}

}  // namespace

bool read(Reader& reader, od::value& value, LotLocation& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "location_id") return read(reader, field, out.location_id);
    if (key == "name") return read(reader, field, out.name);
    return read_quantity_field(reader, key, field, out.quantities);
  });
}

bool read(Reader& reader, od::value& value, Lot& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "lot_number") return read(reader, field, out.lot_number);
    if (key == "lot_date") return read(reader, field, out.lot_date);
    if (key == "locations") return read(reader, field, out.locations);
    return read_quantity_field(reader, key, field, out.quantities);
  });
}

bool read(Reader& reader, od::value& value, LotLevels& out) {
  static constexpr std::string_view kRequired[] = {"inventory_id"};
  RequiredKeys required(reader, kRequired);
  return read_object(reader, value,
                     [&](std::string_view key, od::value& field) {
                       if (key == "inventory_id") return required.read_field(0, field, out.inventory_id);
                       if (key == "name") return read(reader, field, out.name);
                       if (key == "sku") return read(reader, field, out.sku);
                       if (key == "lots") return read(reader, field, out.lots);
                       return true;
                     }) &&
         required.check();
}

bool read(Reader& reader, od::value& value, InventoryDimensions& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "height") return read(reader, field, out.height);
    if (key == "length") return read(reader, field, out.length);
    if (key == "width") return read(reader, field, out.width);
    if (key == "is_locked") return read(reader, field, out.is_locked);
    if (key == "validated") return read(reader, field, out.validated);
    if (key == "unit") return read(reader, field, out.unit);
    return true;
  });
}

bool read(Reader& reader, od::value& value, InventoryVariantFlags& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "is_active") return read(reader, field, out.is_active);
    if (key == "is_bundle") return read(reader, field, out.is_bundle);
    if (key == "is_digital") return read(reader, field, out.is_digital);
    if (key == "hazmat") {
      return unless_null(reader, field, [&] {
        return read_object(reader, field, [&](std::string_view hazmat_key, od::value& hazmat) {
          if (hazmat_key == "is_hazmat") return read(reader, hazmat, out.is_hazmat);
          if (hazmat_key == "validated") return read(reader, hazmat, out.hazmat_validated);
          return true;
        });
      });
    }
    return true;
  });
}

bool read(Reader& reader, od::value& value, InventoryWeight& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "unit") return read(reader, field, out.unit);
    if (key == "value") return read(reader, field, out.value);
    return true;
  });
}

bool read(Reader& reader, od::value& value, InventoryItem& out) {
  static constexpr std::string_view kRequired[] = {"inventory_id"};
  RequiredKeys required(reader, kRequired);
  return read_object(reader, value,
                     [&](std::string_view key, od::value& field) {
                       if (key == "inventory_id") return required.read_field(0, field, out.inventory_id);
                       if (key == "user_id") return read(reader, field, out.user_id);
                       if (key == "name") return read(reader, field, out.name);
                       if (key == "sku") return read(reader, field, out.sku);
                       if (key == "barcode") return read(reader, field, out.barcode);
                       if (key == "is_case") return read(reader, field, out.is_case);
                       if (key == "is_lot") return read(reader, field, out.is_lot);
                       if (key == "dimensions") return read(reader, field, out.dimensions);
                       if (key == "variant") return read(reader, field, out.variant);
                       if (key == "weight") return read(reader, field, out.weight);
                       return true;
                     }) &&
         required.check();
}

bool read(Reader& reader, od::value& value, VariantCustoms& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "country_code_of_origin") return read(reader, field, out.country_code_of_origin);
    if (key == "currency") return read(reader, field, out.currency);
    if (key == "description") return read(reader, field, out.description);
    if (key == "hs_tariff_code") return read(reader, field, out.hs_tariff_code);
    if (key == "is321_eligible") return read(reader, field, out.is321_eligible);
    if (key == "value") return read(reader, field, out.value);
    return true;
  });
}

bool read(Reader& reader, od::value& value, VariantInventory& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "inventory_id") return read(reader, field, out.inventory_id);
    if (key == "on_hand_qty") return read(reader, field, out.on_hand_qty);
    return true;
  });
}

bool read(Reader& reader, od::value& value, Variant& out) {
  static constexpr std::string_view kRequired[] = {"id"};
  RequiredKeys required(reader, kRequired);
  return read_object(reader, value,
                     [&](std::string_view key, od::value& field) {
                       if (key == "id") return required.read_field(0, field, out.id);
                       if (key == "name") return read(reader, field, out.name);
                       if (key == "sku") return read(reader, field, out.sku);
                       if (key == "gtin") return read(reader, field, out.gtin);
                       if (key == "upc") return read(reader, field, out.upc);
                       if (key == "status") return read(reader, field, out.status);
                       if (key == "customs") return read(reader, field, out.customs);
                       if (key == "inventory") return read(reader, field, out.inventory);
                       if (key == "updated_on") return read(reader, field, out.updated_on);
                       return true;
                     }) &&
         required.check();
}

bool read(Reader& reader, od::value& value, Product& out) {
  static constexpr std::string_view kRequired[] = {"id"};
  RequiredKeys required(reader, kRequired);
  return read_object(reader, value,
                     [&](std::string_view key, od::value& field) {
                       if (key == "id") return required.read_field(0, field, out.id);
                       if (key == "name") return read(reader, field, out.name);
                       if (key == "type") return read(reader, field, out.type);
                       if (key == "variants") return read(reader, field, out.variants);
                       return true;
                     }) &&
         required.check();
}

bool read(Reader& reader, od::value& value, ProductList& out) {
  return read_object(reader, value, [&](std::string_view key, od::value& field) {
    if (key == "items") return read(reader, field, out.items);
    if (key == "next") return read(reader, field, out.next);
    if (key == "prev") return read(reader, field, out.prev);
    return true;
  });
}

}  // namespace fulfillsync::api::detail
