#include "result_pulled_tables.hpp"

#include <charconv>
#include <map>
#include <set>

#include <fmt/format.h>

#include "fulfillsync/common/json_writer.hpp"
#include "fulfillsync/common/sql_pages.hpp"

namespace fulfillsync::merchant {
namespace {

std::string json_array(const std::vector<std::string>& texts) {
  json::JsonWriter writer;
  writer.begin_array();
  for (const std::string& text : texts) writer.value(text);
  return writer.end_array().take();
}

std::int64_t integer(const std::optional<std::string>& text) {
  std::int64_t value = 0;
  if (text) std::from_chars(text->data(), text->data() + text->size(), value);
  return value;
}

std::string now_text() { return timestamps::format_iso8601_z(timestamps::Clock::now()); }

// SKUs looked up per statement (sql::PagedStatement: a short page's unused places NULL).
constexpr std::size_t kSkusPerQuery = 100;

const std::vector<std::string>& sku_parameter_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> made;
    for (std::size_t i = 0; i < kSkusPerQuery; ++i) made.push_back(fmt::format("k{}", i));
    return made;
  }();
  return names;
}

}  // namespace

struct ResultPulledTables::Writes {
  explicit Writes(ResultStatements& db)
      : shipments_table(db.table("shipments")),
        tracking_table(db.table("tracking")),
        timeline_table(db.table("shipment_timeline")),
        lots_table(db.table("inventory_lots")),
        variants_table(db.table("variant_sync")),
        // Only orders the daemon pushed have a row; a status older than the one held changes nothing.
        // A statement a row, unlike the upserts: one over a list of rows is planned as a join, which
        // a table whose statistics lag its growth makes a scan of the whole table.
        order_status(fmt::format("UPDATE {} SET remote_status = :status, remote_updated_at = :as_of"
                                 " WHERE reference_id = :reference_id"
                                 " AND (remote_updated_at IS NULL OR remote_updated_at <= :as_of)",
                                 db.result_table(SourceKind::orders))),
        shipments(db.upsert(shipments_table,
                            OnConflict{.key = {"shipment_id"}, .where = "excluded.last_update_at >= t.last_update_at"})),
        // A statement a shipment, as order_status: a list of ids is planned as a scan there too.
        delete_items(fmt::format("DELETE FROM {} WHERE shipment_id = :shipment_id", db.table("shipment_items"))),
        items(db.upsert(db.table("shipment_items"), std::nullopt)),
        // The merchant acknowledged a tracking number, not a shipment: a new number needs a new
        // acknowledgement. Whether it was marked uploaded is the shipment's, so that stays.
        tracking(db.upsert(
            tracking_table,
            OnConflict{.key = {"shipment_id"},
                       .set = {{"written_at", "CASE WHEN t.tracking_number = excluded.tracking_number THEN "
                                              "t.written_at ELSE excluded.written_at END"},
                               {"acknowledged_at",
                                "CASE WHEN t.tracking_number = excluded.tracking_number THEN t.acknowledged_at END"}}})),
        // The provider already lists it as uploaded (marked before the merchant database was restored
        // from a backup, or by another integration): there is nothing left to mark.
        already_marked(fmt::format(
            "UPDATE {} SET upload_marked_at = :now WHERE shipment_id = :shipment_id AND upload_marked_at IS NULL",
            tracking_table)),
        delete_timeline(fmt::format("DELETE FROM {} WHERE shipment_id = :shipment_id", timeline_table)),
        timeline(db.upsert(timeline_table, std::nullopt)),
        // A failed attempt leaves upload_marked_at as it was; a success clears the last error.
        marked(fmt::format("UPDATE {} SET upload_marked_at = :marked_at, mark_error = NULL, mark_attempts = "
                           ":attempts WHERE shipment_id = :shipment_id",
                           tracking_table)),
        mark_failed(fmt::format(
            "UPDATE {} SET mark_error = :error, mark_attempts = :attempts WHERE shipment_id = :shipment_id",
            tracking_table)),
        // Only returns the daemon pushed have a row; a status older than the one held changes nothing.
        return_status(fmt::format(
            "UPDATE {} SET remote_status = :status, remote_updated_at = :as_of, arrived_at = :arrived_at,"
            " processing_at = :processing_at, completed_at = :completed_at, cancelled_at = :cancelled_at,"
            " status_history = :status_history, actions_taken = :actions_taken WHERE reference_id = :reference_id"
            " AND (remote_updated_at IS NULL OR remote_updated_at <= :as_of)",
            db.result_table(SourceKind::returns))),
        held_lots(fmt::format("SELECT lot_number, location_id, location_name, lot_date, "
                              "awaiting_quantity, committed_quantity, fulfillable_quantity, "
                              "internal_transfer_quantity, on_hand_quantity FROM {} "
                              "WHERE inventory_id = :inventory_id",
                              lots_table)),
        // Every listed lot is upserted, so synced_at says when its figures were last confirmed.
        lots(db.upsert(lots_table, OnConflict{.key = {"inventory_id", "lot_number", "location_id"}})),
        remove_lot(fmt::format(
            "DELETE FROM {} WHERE inventory_id = :inventory_id AND lot_number = :lot_number AND location_id = :location_id",
            lots_table)),
        // A SKU's figures read earlier than those held change nothing.
        variants(db.upsert(variants_table,
                           OnConflict{.key = {"sku"}, .where = "excluded.stock_read_at >= t.stock_read_at"})),
        watched_skus_table(db.table("watched_sku_sync")),
        watched_skus(db.upsert(watched_skus_table, std::nullopt)),
        // With the number of the product's variants the map holds: an order line names a product by
        // id only when that is its one variant.
        sku_lookup(kSkusPerQuery, [this](std::size_t skus) {
          std::string places;
          for (std::size_t i = 0; i < skus; ++i) {
            places += fmt::format("{}:{}", i == 0 ? "" : ", ", sku_parameter_names()[i]);
          }
          return fmt::format(
              "SELECT v.sku, v.product_id, v.inventory_id, (SELECT count(*) FROM {0} AS w WHERE w.product_id = "
              "v.product_id) FROM {0} AS v WHERE v.sku IN ({1})",
              variants_table, places);
        }) {}

  const std::string shipments_table, tracking_table, timeline_table, lots_table, variants_table;
  const std::string order_status;
  const std::unique_ptr<RowUpsert> shipments;
  const std::string delete_items;
  const std::unique_ptr<RowUpsert> items, tracking;
  const std::string already_marked, delete_timeline;
  const std::unique_ptr<RowUpsert> timeline;
  const std::string marked, mark_failed, return_status, held_lots;
  const std::unique_ptr<RowUpsert> lots;
  const std::string remove_lot;
  const std::unique_ptr<RowUpsert> variants;
  const std::string watched_skus_table;
  const std::unique_ptr<RowUpsert> watched_skus;
  const sql::PagedStatement sku_lookup;
};

ResultPulledTables::ResultPulledTables(std::unique_ptr<ResultStatements> statements)
    : db_(std::move(statements)), writes_(std::make_unique<Writes>(*db_)) {}

ResultPulledTables::~ResultPulledTables() = default;

void ResultPulledTables::write_shipments(std::span<const OrderStatusRecord> orders,
                                         std::span<const ShipmentRecord> shipments) {
  if (orders.empty() && shipments.empty()) return;
  ResultStatements& db = *db_;
  const Writes& w = *writes_;
  db.in_write_transaction(fmt::format("writing {}", w.shipments_table), [&] {
    for (const OrderStatusRecord& order : orders) {
      db.run_unread(w.order_status, {{"status", order.status}, {"as_of", order.as_of}, {"reference_id", order.reference_id}});
    }

    const std::string now = now_text();
    // The shipments first, all together (one round trip where the database can); then what belongs to
    // each one written. Its items and tracking go to other tables, so a page naming a shipment twice
    // ends as it did when each was written after its shipment.
    std::vector<std::vector<Named>> rows;
    rows.reserve(shipments.size());
    for (const ShipmentRecord& shipment : shipments) {
      rows.push_back({
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
    }
    const std::vector<int> written = w.shipments->write_each(rows);
    // What belongs to each shipment written (an older record's items and tracking are older too):
    // its items replaced, as the last record of it on the page has them; its tracking upserted in
    // page order, as writing each after its shipment would.
    std::map<std::int64_t, const ShipmentRecord*> latest;
    std::vector<std::vector<Named>> items, tracking;
    std::vector<std::int64_t> uploaded;
    for (std::size_t i = 0; i < shipments.size(); ++i) {
      if (written[i] == 0) continue;
      const ShipmentRecord& shipment = shipments[i];
      latest[shipment.shipment_id] = &shipment;
      if (const auto& record = shipment.tracking) {
        tracking.push_back({
            {"shipment_id", shipment.shipment_id},
            {"order_id", shipment.order_id},
            {"order_reference_id", shipment.order_reference_id},
            {"tracking_number", record->tracking_number},
            {"carrier", record->carrier},
            {"carrier_service", record->carrier_service},
            {"tracking_url", record->tracking_url},
            {"scac", record->scac},
            {"bol", record->bol},
            {"pro_number", record->pro_number},
            {"shipping_date", record->shipping_date},
            {"last_tracking_update_at", record->last_tracking_update_at},
            {"written_at", now},
        });
        if (shipment.is_tracking_uploaded) uploaded.push_back(shipment.shipment_id);
      }
    }
    for (const auto& [shipment_id, shipment] : latest) {
      db.run_unread(w.delete_items, {{"shipment_id", shipment_id}});
      for (const ShipmentItemRecord& item : shipment->items) {
        items.push_back({
            {"shipment_id", shipment_id},
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
    }
    w.items->write_all(items);
    w.tracking->write_all(tracking);
    for (const std::int64_t shipment_id : uploaded) db.run_unread(w.already_marked, {{"shipment_id", shipment_id}, {"now", now}});
  });
}

void ResultPulledTables::write_timeline(std::int64_t shipment_id, std::span<const TimelineEntryRecord> entries) {
  ResultStatements& db = *db_;
  const Writes& w = *writes_;
  db.in_write_transaction(fmt::format("writing {}", w.timeline_table), [&] {
    db.run_unread(w.delete_timeline, {{"shipment_id", shipment_id}});
    std::vector<std::vector<Named>> rows;
    rows.reserve(entries.size());
    std::int64_t seq = 0;
    for (const TimelineEntryRecord& entry : entries) {
      rows.push_back({
          {"shipment_id", shipment_id},
          {"seq", ++seq},
          {"timestamp", entry.timestamp},
          {"log_type_id", entry.log_type_id},
          {"log_type_name", entry.log_type_name},
          {"log_type_text", entry.log_type_text},
          {"metadata", entry.metadata_json},
      });
    }
    w.timeline->write_all(rows);
  });
}

std::vector<TrackingToMark> ResultPulledTables::tracking_to_mark(std::int64_t after_shipment_id, std::size_t limit,
                                                                 bool acknowledged_only) {
  const std::string table = db_->table("tracking");
  const std::string acknowledged = acknowledged_only ? " AND acknowledged_at IS NOT NULL" : "";
  std::vector<TrackingToMark> rows;
  for (const auto& row :
       db_->query(fmt::format("reading {}", table),
                  fmt::format("SELECT shipment_id, order_id FROM {} WHERE upload_marked_at IS NULL AND shipment_id > "
                              ":after{} ORDER BY shipment_id LIMIT :limit",
                              table, acknowledged),
                  {{"after", after_shipment_id}, {"limit", static_cast<std::int64_t>(limit)}})) {
    rows.push_back({integer(row[0]), integer(row[1])});
  }
  return rows;
}

void ResultPulledTables::record_tracking_marks(std::span<const TrackingMarkResult> results) {
  if (results.empty()) return;
  ResultStatements& db = *db_;
  const Writes& w = *writes_;
  db.in_write_transaction(fmt::format("writing {}", w.tracking_table), [&] {
    for (const TrackingMarkResult& result : results) {
      if (result.marked_at) {
        db.run(w.marked, {{"marked_at", result.marked_at}, {"attempts", result.attempts}, {"shipment_id", result.shipment_id}});
      } else {
        db.run(w.mark_failed, {{"error", result.error}, {"attempts", result.attempts}, {"shipment_id", result.shipment_id}});
      }
    }
  });
}

void ResultPulledTables::write_return_statuses(std::span<const ReturnStatusRecord> returns) {
  if (returns.empty()) return;
  ResultStatements& db = *db_;
  db.in_write_transaction(fmt::format("writing {}", db.result_table(SourceKind::returns)), [&] {
    for (const ReturnStatusRecord& record : returns) {
      db.run(writes_->return_status, {{"status", record.status},
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

std::vector<std::int64_t> ResultPulledTables::watched_inventory_ids() {
  std::vector<std::int64_t> ids;
  for (const auto& row : db_->query(fmt::format("reading {}", kWatchedInventoryTable),
                                    fmt::format("SELECT DISTINCT inventory_id FROM {} WHERE {} ORDER BY inventory_id",
                                                db_->source_table(kWatchedInventoryTable),
                                                db_->holds_integer("inventory_id")),
                                    {})) {
    ids.push_back(integer(row[0]));
  }
  return ids;
}

LotChanges ResultPulledTables::replace_lots(std::int64_t inventory_id, std::span<const LotRecord> lots) {
  ResultStatements& db = *db_;
  const Writes& w = *writes_;
  const std::string& table = w.lots_table;
  LotChanges changes;
  db.in_write_transaction(fmt::format("writing {}", table), [&] {
    // What is there now: to count the lots that change and to find those the provider no longer lists.
    std::map<std::pair<std::string, std::int64_t>, LotRecord> held;
    for (const auto& row : db.query(fmt::format("reading {}", table),
                                    w.held_lots,
                                    {{"inventory_id", inventory_id}})) {
      LotRecord lot{.lot_number = row[0].value_or(""),
                    .lot_date = row[3],
                    .location_id = integer(row[1]),
                    .location_name = row[2],
                    .quantities = {.awaiting = integer(row[4]),
                                   .committed = integer(row[5]),
                                   .fulfillable = integer(row[6]),
                                   .internal_transfer = integer(row[7]),
                                   .on_hand = integer(row[8])}};
      held.emplace(std::pair(lot.lot_number, lot.location_id), std::move(lot));
    }

    const std::string now = now_text();
    std::vector<std::vector<Named>> rows;
    rows.reserve(lots.size());
    for (const LotRecord& lot : lots) {
      const auto found = held.find(std::pair(lot.lot_number, lot.location_id));
      if (found == held.end() || found->second != lot) ++changes.written;
      if (found != held.end()) held.erase(found);
      const LotQuantitiesRecord& q = lot.quantities;
      rows.push_back({
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
    w.lots->write_all(rows);

    for (const auto& [key, lot] : held) {
      changes.removed +=
          db.run(w.remove_lot, {{"inventory_id", inventory_id}, {"lot_number", key.first}, {"location_id", key.second}});
    }
  });
  return changes;
}

int ResultPulledTables::remove_lots_except(std::span<const std::int64_t> inventory_ids) {
  ResultStatements& db = *db_;
  const std::string table = db.table("inventory_lots");
  int removed = 0;
  db.in_write_transaction(fmt::format("writing {}", table), [&] {
    const std::set<std::int64_t> kept(inventory_ids.begin(), inventory_ids.end());
    std::vector<std::int64_t> dropped;
    for (const auto& row :
         db.query(fmt::format("reading {}", table), fmt::format("SELECT DISTINCT inventory_id FROM {}", table), {})) {
      const std::int64_t id = integer(row[0]);
      if (!kept.contains(id)) dropped.push_back(id);
    }
    const std::string remove = fmt::format("DELETE FROM {} WHERE inventory_id = :inventory_id", table);
    for (std::int64_t id : dropped) removed += db.run(remove, {{"inventory_id", id}});
  });
  return removed;
}

int ResultPulledTables::write_variant_stock(std::span<const VariantStockRecord> variants,
                                            timestamps::TimePoint read_at) {
  if (variants.empty()) return 0;
  ResultStatements& db = *db_;
  const Writes& w = *writes_;
  const std::string read_at_text = timestamps::format_iso8601_z(read_at);
  int written = 0;
  std::vector<std::vector<Named>> rows;
  rows.reserve(variants.size());
  for (const VariantStockRecord& variant : variants) {
    rows.push_back({
        {"sku", variant.sku},
        {"product_id", variant.product_id},
        {"variant_id", variant.variant_id},
        {"inventory_id", variant.inventory_id},
        {"on_hand_qty", variant.on_hand_qty},
        {"product_name", variant.product_name},
        {"variant_name", variant.variant_name},
        {"status", variant.status},
        {"stock_read_at", read_at_text},
    });
  }
  db.in_write_transaction(fmt::format("writing {}", w.variants_table), [&] {
    for (const int changed : w.variants->write_each(rows)) written += changed;
  });
  return written;
}

int ResultPulledTables::remove_variants_read_before(timestamps::TimePoint pass_started) {
  ResultStatements& db = *db_;
  const std::string& table = writes_->variants_table;
  int removed = 0;
  db.in_write_transaction(fmt::format("writing {}", table), [&] {
    removed = db.run(fmt::format("DELETE FROM {} WHERE stock_read_at < :pass_started", table),
                     {{"pass_started", timestamps::format_iso8601_z(pass_started)}});
  });
  return removed;
}

SkuMap ResultPulledTables::sku_map(std::span<const std::string> skus) {
  ResultStatements& db = *db_;
  const std::string& table = writes_->variants_table;
  const auto& names = sku_parameter_names();
  SkuMap map;
  const sql::PagedStatement& lookup = writes_->sku_lookup;
  lookup.for_each_page(skus, [&](std::span<const std::string> page, const std::string& sql) {
    // Every place of the text is named, those past the page NULL.
    std::vector<Named> values;
    for (std::size_t i = 0; i < lookup.size_for(page.size()); ++i) {
      values.push_back({names[i], i < page.size() ? SqlValue(page[i]) : SqlValue(std::nullopt)});
    }
    for (const auto& row : db.query(fmt::format("reading {}", table), sql, values)) {
      map.insert_or_assign(row[0].value_or(""), SkuMapping{.product_id = integer(row[1]),
                                                           .inventory_id = row[2] ? std::optional(integer(row[2]))
                                                                                  : std::nullopt,
                                                           .only_variant = integer(row[3]) == 1});
    }
  });
  return map;
}

WatchedSkus ResultPulledTables::resolve_watched_skus() {
  ResultStatements& db = *db_;
  const Writes& w = *writes_;
  WatchedSkus resolved;
  const bool named = db.source_has_column(kWatchedInventoryTable, "sku");
  db.in_write_transaction(fmt::format("writing {}", w.watched_skus_table), [&] {
    db.run(fmt::format("DELETE FROM {}", w.watched_skus_table), {});
    if (!named) return;
    // A row that names an inventory id is read by it (watched_inventory_ids), its SKU aside.
    const std::string sql = fmt::format(
        "SELECT DISTINCT s.sku, v.sku, v.inventory_id FROM {} AS s LEFT JOIN {} AS v ON v.sku = s.sku "
        "WHERE s.sku IS NOT NULL AND s.sku <> '' AND s.inventory_id IS NULL ORDER BY s.sku",
        db.source_table(kWatchedInventoryTable), w.variants_table);
    const std::string now = now_text();
    for (const auto& row : db.query(fmt::format("reading {}", kWatchedInventoryTable), sql, {})) {
      const std::string sku = row[0].value_or("");
      std::optional<std::string> error;
      if (!row[1]) {
        error = fmt::format("SKU not in {}: the provider's product list held no variant with it at pull_stock's "
                            "last pass",
                            w.variants_table);
      } else if (!row[2]) {
        error = fmt::format("the SKU's variant has no inventory id at the provider ({})", w.variants_table);
      }
      if (error) {
        resolved.unresolved.push_back(sku);
      } else {
        resolved.inventory_ids.push_back(integer(row[2]));
      }
      w.watched_skus->write({{"sku", sku},
                             {"inventory_id", error ? std::nullopt : std::optional(integer(row[2]))},
                             {"error", error},
                             {"checked_at", now}});
    }
  });
  return resolved;
}

}  // namespace fulfillsync::merchant
