#include "fulfillsync/daemon/dry_run.hpp"

#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/api/models/encode.hpp"
#include "fulfillsync/daemon/checkpoint_store.hpp"
#include "fulfillsync/daemon/cli.hpp"
#include "fulfillsync/daemon/source_intake.hpp"
#include "fulfillsync/merchant/change_feed.hpp"
#include "fulfillsync/merchant/request_mapping.hpp"

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

template <typename Row>
void read_all(merchant::MerchantDatabase& db, const merchant::ChangeCursor& start, const merchant::ChangeCursor& floor,
              std::size_t batch_size, api::ApiVersion version, Tally& tally) {
  // Without look-back: every row after the cursor once.
  merchant::ChangeFeed<Row> feed(db, {std::chrono::milliseconds(0), batch_size}, start, floor);
  constexpr bool orders = std::is_same_v<Row, merchant::OrderRow>;
  for (;;) {
    const auto batch = feed.poll();
    for (const Row& row : batch.rows) {
      if constexpr (orders) {
        if (merchant::cancel_requested(row)) {
          ++tally.cancel;
          spdlog::info("order {}: would be cancelled (or never created, if it was not sent yet)", row.reference_id);
          continue;
        }
      }
      const auto mapped = [&] {
        if constexpr (orders) return merchant::map_order(row);
        else return merchant::map_return(row);
      }();
      const char* noun = orders ? "order" : "return";
      if (!mapped.ok()) {
        ++tally.invalid;
        spdlog::warn("{} {} would be rejected: {}", noun, row.reference_id, mapped.reason());
        continue;
      }
      const auto body = [&] {
        if constexpr (orders) return api::encode(redacted(*mapped.request), version);
        else return api::encode(*mapped.request, version);
      }();
      if (!body) {
        ++tally.invalid;
        spdlog::warn("{} {} would be rejected: {}", noun, row.reference_id, body.error().to_string());
        continue;
      }
      ++tally.create;
      spdlog::info("{} {} would be created: {}", noun, row.reference_id, *body);
    }
    if (!batch.more) break;
  }
}

}  // namespace

int dry_run(const config::Config& config) {
  try {
    // The checkpoint store tells where a start would continue; before the first start, the
    // configured starting point does.
    std::unique_ptr<CheckpointStore> store;
    if (std::filesystem::exists(config.checkpoint.path)) {
      store = std::make_unique<CheckpointStore>(config.checkpoint.path, CheckpointStore::Access::alongside);
    }
    std::optional<std::string> since = store ? saved_starting_point(*store) : std::nullopt;
    if (!since) since = config.sync.orders_since;
    if (!since) {
      std::cout << "dry run: nothing is eligible: without sync.orders_since the first start pushes only rows "
                   "changed from that moment on\n";
      return exit_code::ok;
    }
    auto db = merchant::open_merchant_database(config.merchant);
    const auto version = *api::parse_api_version(config.api.version);
    const merchant::ChangeCursor floor{*since, ""};
    const auto start_of = [&](const std::string& name) {
      const auto saved = store ? store->cursor(name) : std::nullopt;
      const auto cursor = saved ? decode_cursor(*saved) : std::nullopt;
      return cursor ? std::max(*cursor, floor) : floor;
    };
    Tally orders, returns;
    const auto batch = static_cast<std::size_t>(config.merchant.batch_size);
    read_all<merchant::OrderRow>(*db, start_of(SourceIntake<merchant::OrderRow>::cursor_name()), floor, batch, version,
                                 orders);
    read_all<merchant::ReturnRow>(*db, start_of(SourceIntake<merchant::ReturnRow>::cursor_name()), floor, batch,
                                  version, returns);
    std::cout << fmt::format(
        "dry run from {}: {} orders would be created, {} cancelled or never created, {} rejected; "
        "{} returns would be created, {} rejected. Nothing was sent.\n",
        *since, orders.create, orders.cancel, orders.invalid, returns.create, returns.invalid);
    return orders.invalid + returns.invalid > 0 ? exit_code::data_error : exit_code::ok;
  } catch (const std::exception& e) {
    spdlog::critical("dry run: {}", e.what());
    return exit_code::unavailable;
  }
}

}  // namespace fulfillsync::daemon
