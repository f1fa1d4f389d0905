#include "cli/dry_run.hpp"

#include <signal.h>

#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>

#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/api/models/encode.hpp"
#include "fulfillsync/common/printable.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/config/duration.hpp"
#include "fulfillsync/daemon/exit_codes.hpp"
#include "fulfillsync/daemon/mapping/catalog_mapping.hpp"
#include "fulfillsync/daemon/mapping/request_mapping.hpp"
#include "fulfillsync/daemon/push/source_intake.hpp"
#include "fulfillsync/daemon/store/checkpoint_store.hpp"
#include "fulfillsync/daemon/store/outbound_ledger.hpp"
#include "fulfillsync/merchant/change_feed.hpp"
#include "fulfillsync/merchant/merchant_database.hpp"
#include "push/catalog_standing.hpp"

namespace fulfillsync::daemon {
namespace {

constexpr const char* kRedacted = "(redacted)";

void redact(std::optional<std::string>& field) {
  if (field) field = kRedacted;
}

// The recipient is a person: name, contact and address stay out of logs.
api::OrderCreateRequest redacted(api::OrderCreateRequest request) {
  auto& recipient = request.recipient;
  redact(recipient.name);
  redact(recipient.email);
  redact(recipient.phone_number);
  if (recipient.address) {
    redact(recipient.address->address1);
    redact(recipient.address->address2);
    redact(recipient.address->company_name);
  }
  redact(request.gift_message);
  return request;
}

struct Tally {
  int create = 0, cancel = 0, never_created = 0, invalid = 0;
};

// SIGTERM or SIGINT ends the read after the current batch, so that both databases are closed
// normally: a read-only connection's close is what removes the side files its opening created.
volatile std::sig_atomic_t stop_requested = 0;

void request_stop(int) { stop_requested = 1; }

void stop_reading_on_signals() {
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

// The SKU map's rows for the SKUs `rows` name, as a start would read them; none when the result
// tables are not there yet (before the first start).
template <typename Row>
merchant::SkuMap skus_of(const std::vector<Row>& rows, merchant::PulledTables& pulled) {
  std::vector<std::string> skus;
  for (const Row& row : rows) {
    for (std::string& sku : skus_named(row)) skus.push_back(std::move(sku));
  }
  if (skus.empty()) return {};
  try {
    return pulled.sku_map(skus);
  } catch (const merchant::MerchantDatabaseError& e) {
    spdlog::debug("dry run: the SKU map cannot be read ({}); lines by SKU are judged without it", e.what());
    return {};
  }
}

// Tallies rows read (what a start would do with each), logging each.
template <typename Row>
void tally_rows(const std::vector<Row>& rows, merchant::PulledTables& pulled, api::ApiVersion version, Tally& tally) {
  constexpr bool orders = std::is_same_v<Row, merchant::OrderRow>;
  const merchant::SkuMap skus = skus_of(rows, pulled);
  for (const Row& row : rows) {
    if constexpr (orders) {
      if (cancel_requested(row)) {
        ++tally.cancel;
        spdlog::info("order {}: would be cancelled (or never created, if it was not sent yet)",
                     text::printable(row.reference_id));
        continue;
      }
    }
    const auto mapped = [&] {
      if constexpr (orders) return map_order(row, skus);
      else return map_return(row, skus);
    }();
    const char* noun = orders ? "order" : "return";
    if (!mapped.ok()) {
      ++tally.invalid;
      spdlog::warn("{} {} would be rejected: {}", noun, text::printable(row.reference_id), mapped.reason());
      continue;
    }
    const auto body = [&] {
      if constexpr (orders) return api::encode(redacted(*mapped.request), version);
      else return api::encode(*mapped.request, version);
    }();
    if (!body) {
      ++tally.invalid;
      spdlog::warn("{} {} would be rejected: {}", noun, text::printable(row.reference_id),
                   text::printable(body.error().to_string()));
      continue;
    }
    ++tally.create;
    spdlog::info("{} {} would be created: {}", noun, text::printable(row.reference_id), *body);
  }
}

template <typename Row>
void read_all(merchant::SourceTables& db, merchant::PulledTables& pulled, const merchant::ChangeCursor& start,
              const merchant::ChangeCursor& floor, typename merchant::ChangeFeed<Row>::Options feed_options,
              api::ApiVersion version, Tally& tally) {
  // Without look-back: every row after the cursor once.
  feed_options.look_back = std::chrono::milliseconds(0);
  merchant::ChangeFeed<Row> feed(db, feed_options, start, floor);
  constexpr bool orders = std::is_same_v<Row, merchant::OrderRow>;
  for (;;) {
    const auto batch = feed.poll();
    tally_rows(batch.rows, pulled, version, tally);
    for (const Row& row : batch.ahead) {
      ++tally.invalid;
      if (!timestamps::parse_iso8601(row.change_time)) {
        spdlog::warn("{} {} would be rejected: updated_at is not a time, found '{}'", orders ? "order" : "return",
                     text::printable(row.reference_id), text::printable(row.updated_at));
        continue;
      }
      spdlog::warn("{} {} would be rejected: updated_at {} is more than {} ahead of this server's clock "
                   "(merchant.max_clock_skew)",
                   orders ? "order" : "return", text::printable(row.reference_id), text::printable(row.updated_at),
                   config::format_duration(feed_options.max_clock_skew));
    }
    if (!batch.more || stop_requested) break;
  }
}

// The rows the change log holds after `position`, each once.
template <typename Row>
void read_log(merchant::SourceTables& db, merchant::PulledTables& pulled, std::string position, std::size_t batch_size,
              api::ApiVersion version, Tally& tally) {
  constexpr merchant::SourceKind kind =
      std::is_same_v<Row, merchant::OrderRow> ? merchant::SourceKind::orders : merchant::SourceKind::returns;
  std::set<std::string> seen;
  for (bool more = true; more && !stop_requested;) {
    const merchant::ChangedKeys changes = db.changes_after(kind, position, batch_size);
    std::vector<std::string> keys;
    for (const std::string& key : changes.keys) {
      if (seen.insert(key).second) keys.push_back(key);
    }
    const std::vector<Row> rows = [&] {
      if constexpr (std::is_same_v<Row, merchant::OrderRow>) return db.read_orders(keys);
      else return db.read_returns(keys);
    }();
    tally_rows(rows, pulled, version, tally);
    position = changes.through;
    more = changes.more;
  }
}

struct CatalogTally {
  int create = 0, update = 0, invalid = 0, unclear = 0;
};

// What an update of product `id` would send, request by request; a changed variant's id is read
// from the provider just before, so it is named by its SKU here.
std::string update_requests(std::int64_t id, const ProductChanges& changes) {
  std::vector<std::string> requests;
  if (!changes.product_patch.empty()) {
    requests.push_back(fmt::format("PATCH /product/{} {}", id, changes.product_patch));
  }
  std::vector<std::string> variants;
  for (const auto& [sku, whole] : changes.new_variants) variants.push_back(whole);
  if (!variants.empty()) {
    requests.push_back(fmt::format("POST /product/{}/variants [{}]", id, fmt::join(variants, ",")));
  }
  variants.clear();
  for (const auto& [sku, changed] : changes.changed_variants) {
    variants.push_back(fmt::format("SKU '{}' {}", text::printable(sku), changed));
  }
  if (!variants.empty()) {
    requests.push_back(fmt::format("PATCH /product/{}/variants {}", id, fmt::join(variants, ", ")));
  }
  return fmt::format("{}", fmt::join(requests, "; "));
}

// What push_products would do with each product of the catalog, compared with the ledger as it
// compares them (push/catalog_standing.hpp), logged.
void tally_catalog(merchant::SourceTables& db, OutboundLedger* ledger, api::ApiVersion version, CatalogTally& tally) {
  for_each_product(db, ledger, [&](const merchant::ProductRow& row, ProductStanding standing) {
    const std::string reference = text::printable(row.reference_id);
    switch (standing) {
      case ProductStanding::up_to_date: return;
      case ProductStanding::create_unclear:
        ++tally.unclear;
        spdlog::info("product {}: whether its create was made is unclear: it would be looked up by SKU (GET "
                     "/product?Search=) before anything is sent",
                     reference);
        return;
      case ProductStanding::update_unclear:
        ++tally.unclear;
        spdlog::info("product {}: whether its update was applied is unclear: it would be sent again", reference);
        return;
      case ProductStanding::create_rejected:
      case ProductStanding::update_rejected: {
        ++tally.invalid;
        const auto entry = ledger->find(standing == ProductStanding::create_rejected ? LedgerKind::product_create
                                                                                      : LedgerKind::product_update,
                                        row.reference_id);
        spdlog::warn("product {} stays rejected (unchanged since; 'fulfillsyncd retry --product' takes it again): {}",
                     reference, text::printable(entry ? entry->last_error : ""));
        return;
      }
      case ProductStanding::to_create:
      case ProductStanding::create_queued: {
        const ProductBody built = product_body(row, version);
        if (!built.body) {
          ++tally.invalid;
          spdlog::warn("product {} would be rejected: {}", reference, built.problems);
          return;
        }
        ++tally.create;
        spdlog::info("product {} would be created with its {} variants: POST /product {}", reference, row.lines.size(),
                     text::printable(*built.body));
        return;
      }
      case ProductStanding::to_update:
      case ProductStanding::update_queued: {
        const auto create = ledger->find(LedgerKind::product_create, row.reference_id);
        const auto update = ledger->find(LedgerKind::product_update, row.reference_id);
        const ProductBody built = product_body(row, version);
        if (!built.body) {
          ++tally.invalid;
          spdlog::warn("product {}: its change would be rejected: {}", reference, built.problems);
          return;
        }
        const std::string base = update_base(*create, update);
        if (base.empty()) {
          ++tally.update;
          spdlog::info("product {} would be read at the provider (what it holds is not known) and updated with what "
                       "differs",
                       reference);
          return;
        }
        const auto changes = product_changes(base, *built.body);
        if (!changes) {
          ++tally.invalid;
          spdlog::warn("product {}: its change would be rejected: what the provider has cannot be read back from the "
                       "checkpoint store",
                       reference);
          return;
        }
        if (const std::string note = provider_keeps_note(*changes); !note.empty()) {
          spdlog::info("product {}: {}", reference, text::printable(note));
        }
        if (changes->sends_nothing()) {
          spdlog::info("product {}: nothing the provider holds changed; nothing would be sent", reference);
          return;
        }
        ++tally.update;
        spdlog::info("product {} would be updated with only what changed: {}", reference,
                     text::printable(update_requests(create->remote_id.value_or(0), *changes)));
        return;
      }
    }
  });
}

}  // namespace

int dry_run(const config::Config& config) {
  stop_reading_on_signals();
  try {
    // The checkpoint store tells where a start would continue; before the first start, the
    // configured starting point does. Both databases are opened read-only: a dry run moves no
    // cursor, fixes no starting point, creates no result table and creates no missing store.
    std::unique_ptr<CheckpointStore> store;
    if (std::filesystem::exists(config.checkpoint.path)) {
      store = std::make_unique<CheckpointStore>(config.checkpoint.path, CheckpointStore::Access::read_only);
    }
    std::optional<std::string> since = store ? saved_starting_point(*store) : std::nullopt;
    if (!since) since = config.sync.orders_since;
    const bool products = config.sync.push_products.enabled;
    if (!since && !products) {
      std::cout << "dry run: nothing is eligible: without sync.orders_since the first start pushes only rows "
                   "changed from that moment on\n";
      return exit_code::ok;
    }
    if (since) spdlog::info("dry run: reading what a start would push, from {}; nothing is sent or written", *since);
    const auto database = merchant::open_merchant_database_read_only(config.merchant);
    merchant::SourceTables& db = database->source();
    merchant::PulledTables& pulled = database->pulled();
    const auto version = *api::parse_api_version(config.api.version);
    Tally orders, returns;
    std::string summary;
    if (since) {
      const merchant::ChangeCursor floor{*since, ""};
      const auto start_of = [&](const std::string& name) {
        const auto saved = store ? store->cursor(name) : std::nullopt;
        const auto cursor = saved ? decode_cursor(*saved) : std::nullopt;
        return cursor ? std::max(*cursor, floor) : floor;
      };
      // Where the daemon reads by the change log, a start would take what the log holds after its
      // position; the updated_at cursor is no longer moved then.
      const auto by_log = [&](const std::string& name) -> std::optional<std::string> {
        const auto saved = store ? store->cursor(name) : std::nullopt;
        if (!saved || saved->starts_with("catch-up ") || !db.has_change_log()) return std::nullopt;
        return saved;
      };
      const merchant::ChangeFeed<merchant::OrderRow>::Options feed{
          config.merchant.look_back, static_cast<std::size_t>(config.merchant.batch_size),
          config.merchant.max_clock_skew};
      if (const auto position = by_log(SourceIntake<merchant::OrderRow>::sequence_name())) {
        read_log<merchant::OrderRow>(db, pulled, *position, feed.batch_size, version, orders);
      } else {
        read_all<merchant::OrderRow>(db, pulled, start_of(SourceIntake<merchant::OrderRow>::cursor_name()), floor,
                                     feed, version, orders);
      }
      if (!stop_requested) {
        if (const auto position = by_log(SourceIntake<merchant::ReturnRow>::sequence_name())) {
          read_log<merchant::ReturnRow>(db, pulled, *position, feed.batch_size, version, returns);
        } else {
          read_all<merchant::ReturnRow>(db, pulled, start_of(SourceIntake<merchant::ReturnRow>::cursor_name()), floor,
                                        {feed.look_back, feed.batch_size, feed.max_clock_skew}, version, returns);
        }
      }
      summary = fmt::format(
          "dry run from {}{}: {} orders would be created, {} cancelled or never created, {} rejected; "
          "{} returns would be created, {} rejected",
          *since, stop_requested ? ", stopped by a signal before the end" : "", orders.create, orders.cancel,
          orders.invalid, returns.create, returns.invalid);
    } else {
      summary = "dry run: no order or return is eligible: without sync.orders_since the first start pushes only rows "
                "changed from that moment on";
    }
    // push_products compares the whole catalog with the ledger at every pass, whatever the starting point.
    CatalogTally catalog;
    if (products && !stop_requested) {
      spdlog::info("dry run: comparing the catalog with what was sent; nothing is sent or written");
      std::unique_ptr<OutboundLedger> ledger = store ? std::make_unique<OutboundLedger>(*store) : nullptr;
      tally_catalog(db, ledger.get(), version, catalog);
      summary += fmt::format("; {} products would be created, {} updated, {} rejected, {} looked up first{}",
                             catalog.create, catalog.update, catalog.invalid, catalog.unclear,
                             stop_requested ? " (stopped by a signal before the end)" : "");
    }
    std::cout << summary << ". Nothing was sent or written.\n";
    if (stop_requested) return exit_code::temporary_failure;
    return orders.invalid + returns.invalid + catalog.invalid > 0 ? exit_code::data_error : exit_code::ok;
  } catch (const std::exception& e) {
    spdlog::critical("dry run: {}", e.what());
    return exit_code::unavailable;
  }
}

}  // namespace fulfillsync::daemon
