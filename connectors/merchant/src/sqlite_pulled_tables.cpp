#include "sqlite_pulled_tables.hpp"

#include <map>
#include <set>

#include "fulfillsync/common/json_writer.hpp"

namespace fulfillsync::merchant {
namespace {

std::string json_array(const std::vector<std::string>& texts) {
  json::JsonWriter writer;
  writer.begin_array();
  for (const std::string& text : texts) writer.value(text);
  return writer.end_array().take();
}

}  // namespace

void SqlitePulledTables::write_shipments(std::span<const OrderStatusRecord> orders,
                                         std::span<const ShipmentRecord> shipments) {
  if (orders.empty() && shipments.empty()) return;
  SqliteConnection& c = connection_;
  c.in_write_transaction(fmt::format("writing {}", c.table("shipments")), [&] {
    // Only orders the daemon pushed have a row; a status older than the one held changes nothing.
    SQLite::Statement order_status(c.db(), "UPDATE " + c.result_table(SourceKind::orders) +
                                               " SET remote_status = :status, remote_updated_at = :as_of"
                                               " WHERE reference_id = :reference_id"
                                               " AND (remote_updated_at IS NULL OR remote_updated_at <= :as_of)");
    Upsert upsert_shipment(c.db(), c.table("shipments"),
                           {.key = {"shipment_id"}, .where = "excluded.last_update_at >= t.last_update_at"});
    SQLite::Statement delete_items(c.db(),
                                   "DELETE FROM " + c.table("shipment_items") + " WHERE shipment_id = :shipment_id");
    Upsert insert_item(c.db(), c.table("shipment_items"));
    // The merchant acknowledged a tracking number, not a shipment: a new number needs a new
    // acknowledgement. Whether it was marked uploaded is the shipment's, so that stays.
    Upsert upsert_tracking(
        c.db(), c.table("tracking"),
        {.key = {"shipment_id"},
         .set = {
             {"written_at",
              "CASE WHEN t.tracking_number = excluded.tracking_number THEN t.written_at"
              " ELSE excluded.written_at END"},
             {"acknowledged_at", "CASE WHEN t.tracking_number = excluded.tracking_number THEN t.acknowledged_at END"}}});
    // The provider already lists it as uploaded (marked before the merchant database was restored
    // from a backup, or by another integration): there is nothing left to mark.
    SQLite::Statement already_marked(c.db(), "UPDATE " + c.table("tracking") +
                                                 " SET upload_marked_at = :now"
                                                 " WHERE shipment_id = :shipment_id AND upload_marked_at IS NULL");

    for (const OrderStatusRecord& order : orders) {
      run(order_status, {{"status", order.status}, {"as_of", order.as_of}, {"reference_id", order.reference_id}});
    }

    const std::string now = now_text();
    for (const ShipmentRecord& shipment : shipments) {
      const int written = upsert_shipment.write({
          {"shipment_id", shipment.shipment_id},
          {"order_id", shipment.order_id},
          {"order_reference_id", shipment.order_reference_id},
          {"status", shipment.status},
          {"status_detail_id", shipment.status_detail_id},
          {"status_detail_name", shipment.status_detail_name},
          {"location_id", shipment.location_id},
          {"location_name", shipment.location_name},
          {"ship_option", shipment.ship_option},
          {"created_date", shipment.created_date},
          {"actual_fulfillment_date", shipment.actual_fulfillment_date},
          {"estimated_fulfillment_date", shipment.estimated_fulfillment_date},
          {"delivery_date", shipment.delivery_date},
          {"last_update_at", shipment.last_update_at},
          {"invoice_amount", shipment.invoice_amount},
          {"invoice_currency_code", shipment.invoice_currency_code},
          {"is_tracking_uploaded", shipment.is_tracking_uploaded},
          {"synced_at", now},
      });
      if (written == 0) continue;  // an older record: its items and tracking are older too
      run(delete_items, {{"shipment_id", shipment.shipment_id}});
      for (const ShipmentItemRecord& item : shipment.items) {
        insert_item.write({
            {"shipment_id", shipment.shipment_id},
            {"line_number", item.line_number},
            {"product_id", item.product_id},
            {"product_reference_id", item.product_reference_id},
            {"sku", item.sku},
            {"product_name", item.product_name},
            {"inventory_id", item.inventory_id},
            {"lot", item.lot},
            {"expiration_date", item.expiration_date},
            {"quantity", item.quantity},
            {"quantity_committed", item.quantity_committed},
            {"serial_numbers", json_array(item.serial_numbers)},
        });
      }
      if (const auto& tracking = shipment.tracking) {
        upsert_tracking.write({
            {"shipment_id", shipment.shipment_id},
            {"order_id", shipment.order_id},
            {"order_reference_id", shipment.order_reference_id},
            {"tracking_number", tracking->tracking_number},
            {"carrier", tracking->carrier},
            {"carrier_service", tracking->carrier_service},
            {"tracking_url", tracking->tracking_url},
            {"scac", tracking->scac},
            {"bol", tracking->bol},
            {"pro_number", tracking->pro_number},
            {"shipping_date", tracking->shipping_date},
            {"last_tracking_update_at", tracking->last_tracking_update_at},
            {"written_at", now},
        });
        if (shipment.is_tracking_uploaded) run(already_marked, {{"shipment_id", shipment.shipment_id}, {"now", now}});
      }
    }
  });
}

void SqlitePulledTables::write_timeline(std::int64_t shipment_id, std::span<const TimelineEntryRecord> entries) {
  SqliteConnection& c = connection_;
  c.in_write_transaction(fmt::format("writing {}", c.table("shipment_timeline")), [&] {
    SQLite::Statement remove(c.db(),
                             "DELETE FROM " + c.table("shipment_timeline") + " WHERE shipment_id = :shipment_id");
    Upsert insert(c.db(), c.table("shipment_timeline"));
    run(remove, {{"shipment_id", shipment_id}});
    std::int64_t seq = 0;
    for (const TimelineEntryRecord& entry : entries) {
      insert.write({
          {"shipment_id", shipment_id},
          {"seq", ++seq},
          {"timestamp", entry.timestamp},
          {"log_type_id", entry.log_type_id},
          {"log_type_name", entry.log_type_name},
          {"log_type_text", entry.log_type_text},
          {"metadata", entry.metadata_json},
      });
    }
  });
}

std::vector<TrackingToMark> SqlitePulledTables::tracking_to_mark(std::int64_t after_shipment_id, std::size_t limit,
                                                                 bool acknowledged_only) {
  return connection_.guarded(fmt::format("reading {}", connection_.table("tracking")), [&] {
    SQLite::Statement query(connection_.db(),
                            "SELECT shipment_id, order_id FROM " + connection_.table("tracking") +
                                " WHERE upload_marked_at IS NULL AND shipment_id > ?1"
                                " AND (?2 = 0 OR acknowledged_at IS NOT NULL) ORDER BY shipment_id LIMIT ?3");
    query.bind(1, static_cast<int64_t>(after_shipment_id));
    query.bind(2, acknowledged_only ? 1 : 0);
    query.bind(3, static_cast<int64_t>(limit));
    std::vector<TrackingToMark> rows;
    while (query.executeStep()) rows.push_back({query.getColumn(0).getInt64(), query.getColumn(1).getInt64()});
    return rows;
  });
}

void SqlitePulledTables::record_tracking_marks(std::span<const TrackingMarkResult> results) {
  if (results.empty()) return;
  SqliteConnection& c = connection_;
  c.in_write_transaction(fmt::format("writing {}", c.table("tracking")), [&] {
    // A failed attempt leaves upload_marked_at as it was; a success clears the last error.
    SQLite::Statement update(c.db(), "UPDATE " + c.table("tracking") +
                                         " SET upload_marked_at = coalesce(:marked_at, upload_marked_at),"
                                         " mark_error = CASE WHEN :marked_at IS NULL THEN :error END,"
                                         " mark_attempts = :attempts WHERE shipment_id = :shipment_id");
    for (const TrackingMarkResult& result : results) {
      run(update, {{"shipment_id", result.shipment_id},
                   {"marked_at", result.marked_at},
                   {"error", result.error},
                   {"attempts", result.attempts}});
    }
  });
}

void SqlitePulledTables::write_return_statuses(std::span<const ReturnStatusRecord> returns) {
  if (returns.empty()) return;
  SqliteConnection& c = connection_;
  c.in_write_transaction(fmt::format("writing {}", c.result_table(SourceKind::returns)), [&] {
    // Only returns the daemon pushed have a row; a status older than the one held changes nothing.
    SQLite::Statement update(c.db(), "UPDATE " + c.result_table(SourceKind::returns) +
                                         " SET remote_status = :status, remote_updated_at = :as_of,"
                                         " arrived_at = :arrived_at, processing_at = :processing_at,"
                                         " completed_at = :completed_at, cancelled_at = :cancelled_at,"
                                         " status_history = :status_history, actions_taken = :actions_taken"
                                         " WHERE reference_id = :reference_id"
                                         " AND (remote_updated_at IS NULL OR remote_updated_at <= :as_of)");
    for (const ReturnStatusRecord& record : returns) {
      run(update, {{"status", record.status},
                   {"as_of", record.as_of},
                   {"arrived_at", record.arrived_at},
                   {"processing_at", record.processing_at},
                   {"completed_at", record.completed_at},
                   {"cancelled_at", record.cancelled_at},
                   {"status_history", record.status_history_json},
                   {"actions_taken", record.actions_taken_json},
                   {"reference_id", record.reference_id}});
    }
  });
}

std::vector<std::int64_t> SqlitePulledTables::watched_inventory_ids() {
  return connection_.guarded(fmt::format("reading {}", kWatchedInventoryTable), [&] {
    std::vector<std::int64_t> ids;
    SQLite::Statement query(connection_.db(), "SELECT DISTINCT inventory_id FROM " + sql_name(kWatchedInventoryTable) +
                                                  " WHERE typeof(inventory_id) = 'integer' ORDER BY inventory_id");
    while (query.executeStep()) ids.push_back(query.getColumn(0).getInt64());
    return ids;
  });
}

LotChanges SqlitePulledTables::replace_lots(std::int64_t inventory_id, std::span<const LotRecord> lots) {
  SqliteConnection& c = connection_;
  return c.in_write_transaction(fmt::format("writing {}", c.table("inventory_lots")), [&] {
    // What is there now: to count the lots that change and to find those the provider no longer lists.
    std::map<std::pair<std::string, std::int64_t>, LotRecord> held;
    SQLite::Statement query(c.db(), fmt::format("SELECT lot_number, location_id, location_name, lot_date, "
                                                "awaiting_quantity, committed_quantity, fulfillable_quantity, "
                                                "internal_transfer_quantity, on_hand_quantity FROM {} "
                                                "WHERE inventory_id = ?1",
                                                c.table("inventory_lots")));
    query.bind(1, static_cast<int64_t>(inventory_id));
    while (query.executeStep()) {
      LotRecord lot{.lot_number = query.getColumn(0).getString(),
                    .lot_date = optional_text(query.getColumn(3)),
                    .location_id = query.getColumn(1).getInt64(),
                    .location_name = optional_text(query.getColumn(2)),
                    .quantities = {.awaiting = query.getColumn(4).getInt64(),
                                   .committed = query.getColumn(5).getInt64(),
                                   .fulfillable = query.getColumn(6).getInt64(),
                                   .internal_transfer = query.getColumn(7).getInt64(),
                                   .on_hand = query.getColumn(8).getInt64()}};
      held.emplace(std::pair(lot.lot_number, lot.location_id), std::move(lot));
    }

    // Every listed lot is upserted, so synced_at says when its figures were last confirmed.
    Upsert upsert(c.db(), c.table("inventory_lots"), {.key = {"inventory_id", "lot_number", "location_id"}});
    LotChanges changes;
    const std::string now = now_text();
    for (const LotRecord& lot : lots) {
      const auto found = held.find(std::pair(lot.lot_number, lot.location_id));
      if (found == held.end() || found->second != lot) ++changes.written;
      if (found != held.end()) held.erase(found);
      const LotQuantitiesRecord& q = lot.quantities;
      upsert.write({
          {"inventory_id", inventory_id},
          {"lot_number", lot.lot_number},
          {"location_id", lot.location_id},
          {"location_name", lot.location_name},
          {"lot_date", lot.lot_date},
          {"awaiting_quantity", q.awaiting},
          {"committed_quantity", q.committed},
          {"fulfillable_quantity", q.fulfillable},
          {"internal_transfer_quantity", q.internal_transfer},
          {"on_hand_quantity", q.on_hand},
          {"synced_at", now},
      });
    }

    SQLite::Statement remove(c.db(), "DELETE FROM " + c.table("inventory_lots") +
                                         " WHERE inventory_id = :inventory_id AND lot_number = :lot_number"
                                         " AND location_id = :location_id");
    for (const auto& [key, lot] : held) {
      changes.removed +=
          run(remove, {{"inventory_id", inventory_id}, {"lot_number", key.first}, {"location_id", key.second}});
    }
    return changes;
  });
}

int SqlitePulledTables::remove_lots_except(std::span<const std::int64_t> inventory_ids) {
  SqliteConnection& c = connection_;
  return c.in_write_transaction(fmt::format("writing {}", c.table("inventory_lots")), [&] {
    const std::set<std::int64_t> kept(inventory_ids.begin(), inventory_ids.end());
    std::vector<std::int64_t> dropped;
    SQLite::Statement query(c.db(), "SELECT DISTINCT inventory_id FROM " + c.table("inventory_lots"));
    while (query.executeStep()) {
      const std::int64_t id = query.getColumn(0).getInt64();
      if (!kept.contains(id)) dropped.push_back(id);
    }
    SQLite::Statement remove(c.db(),
                             "DELETE FROM " + c.table("inventory_lots") + " WHERE inventory_id = :inventory_id");
    int removed = 0;
    for (std::int64_t id : dropped) removed += run(remove, {{"inventory_id", id}});
    return removed;
  });
}

}  // namespace fulfillsync::merchant
