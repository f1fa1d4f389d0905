#include "push/store_rebuild.hpp"

#include <algorithm>
#include <map>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/api/provider.hpp"
#include "fulfillsync/common/printable.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/config/duration.hpp"
#include "fulfillsync/daemon/mapping/catalog_mapping.hpp"
#include "fulfillsync/daemon/push/source_intake.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;
using merchant::SourceKind;

namespace {

// Result rows read and adopted per ledger commit.
constexpr std::size_t kResultPage = 1000;
// Ids per read at the provider: its page limit.
constexpr std::size_t kIdsPerRead = 250;
// A store rebuilt from nothing reads the source tables again from a little before the first result
// was written: a row taken at the first poll was changed before its result existed.
constexpr auto kStartingPointMargin = std::chrono::minutes(1);
constexpr std::size_t kMissingShown = 5;
constexpr std::chrono::milliseconds kWaitStep{100};

constexpr const char* kUnclearBeforeRebuild =
    "possibly sent before the checkpoint store was rebuilt, without an answer it records: looked up by reference "
    "first";
constexpr const char* kCancelNotShown =
    "the result table records this cancel, the provider does not show the order cancelled: sent again";

LedgerKind create_kind(SourceKind kind) {
  return kind == SourceKind::orders ? LedgerKind::order_create : LedgerKind::return_create;
}

std::string iso(const std::optional<timestamps::TimePoint>& when) {
  return when ? timestamps::format_iso8601_z(*when) : std::string();
}

}  // namespace

std::string RebuildSummary::describe() const {
  std::string text = fmt::format(
      "rebuilt from the merchant's result tables: {} orders and {} returns adopted as created, {} cancels adopted, "
      "{} possible sends to look up by reference",
      orders_adopted, returns_adopted, cancels_adopted, looked_up);
  if (products_adopted > 0) {
    text += fmt::format("; {} products adopted as created ({} to be compared with the provider at the next pass)",
                        products_adopted, products_to_compare);
  }
  if (products_behind > 0) {
    text += fmt::format("; {} products changed at the provider since this store was current, to be compared with it "
                        "at the next pass",
                        products_behind);
  }
  if (behind) text += " (the result tables are newer than the store: restored from an older copy, or lost)";
  if (cancels_queued > 0) text += fmt::format("; {} cancels the provider does not show sent again", cancels_queued);
  if (checked) {
    text += fmt::format("; checked at the provider in {} requests: {} found, {} missing", calls, confirmed, missing);
  } else if (orders_adopted + returns_adopted > 0) {
    text += "; not checked at the provider yet";
  }
  if (!missing_references.empty()) {
    std::string shown;
    for (const auto& reference : missing_references) shown += (shown.empty() ? "" : ", ") + reference;
    text += fmt::format(" ({}{})", shown, missing > static_cast<int>(missing_references.size()) ? ", ..." : "");
  }
  if (starting_point) text += fmt::format("; source tables read again from {}", *starting_point);
  return text;
}

StoreRebuild::StoreRebuild(merchant::SyncResults& results, CheckpointStore& store, OutboundLedger& ledger,
                           std::optional<Catalog> catalog)
    : results_(results), store_(store), ledger_(ledger), catalog_(catalog) {}

void StoreRebuild::adopt(const std::optional<std::string>& orders_since) {
  const bool empty_store = !saved_starting_point(store_);
  summary_.empty = empty_store;
  std::optional<std::string> oldest_seen;
  std::vector<Unsettled> unsettled;
  adopt_table(SourceKind::orders, oldest_seen, unsettled);
  adopt_table(SourceKind::returns, oldest_seen, unsettled);
  look_up_unsettled(unsettled);
  if (catalog_) adopt_products();
  if (empty_store && (orders_since || oldest_seen)) {
    // Where pushing began is not known any more: sync.orders_since when set, else a little before
    // the oldest result. Rows read again are recognised by the ledger rebuilt above, not sent.
    summary_.starting_point = orders_since ? *orders_since
                                           : timestamps::format_iso8601_z(
                                                 *timestamps::parse_iso8601(*oldest_seen) - kStartingPointMargin);
    starting_point(store_, summary_.starting_point);
  }
  if (summary_.adopted_any()) spdlog::warn("checkpoint store {}: {}", store_.path().string(), summary_.describe());
}

bool StoreRebuild::behind(std::initializer_list<LedgerKind> kinds, const merchant::SyncResult& result) {
  // The result row holds the time of the ledger state it was written from (for an order, the later
  // of its create and its cancel; for a product, of its create and its update): a newer one was
  // written by a store that knew more than this one.
  std::optional<timestamps::TimePoint> known;
  for (const LedgerKind kind : kinds) {
    const auto entry = ledger_.find(kind, result.reference_id);
    if (!entry) continue;
    const auto when = timestamps::parse_iso8601(entry->updated_at);
    if (when && (!known || *when > *known)) known = *when;
  }
  // (A row written in flight by ResultWriter::announce_sends keeps the time of the entry it was then,
  // which this ledger may share: look_up_unsettled() looks it up after the quiet time, alone, since a
  // kill between that write and the ledger's mark leaves the same trace in a store that is current.)
  return !known || result.updated_at > *known;
}

void StoreRebuild::adopt_table(SourceKind kind, std::optional<std::string>& oldest_seen,
                               std::vector<Unsettled>& unsettled) {
  const LedgerKind create = create_kind(kind);
  std::string after;
  for (;;) {
    const auto results = results_.results_after(kind, after, kResultPage);
    if (results.empty()) return;
    after = results.back().reference_id;
    auto batch = ledger_.batch();
    for (const merchant::SyncResult& result : results) {
      if (result.first_seen_at) {
        const std::string seen = timestamps::format_iso8601_z(*result.first_seen_at);
        if (!oldest_seen || seen < *oldest_seen) oldest_seen = seen;
      }
      // Before anything below changes the ledger's times.
      summary_.behind = (kind == SourceKind::orders ? behind({LedgerKind::order_create, LedgerKind::order_cancel}, result)
                                                    : behind({LedgerKind::return_create}, result)) ||
                        summary_.behind;
      const std::string hash = result.content_hash.value_or("");
      if (result.remote_id) {
        const bool adopted = ledger_.adopt(create, result.reference_id, hash, *result.remote_id,
                                           result.remote_status.value_or(""), iso(result.remote_created_at),
                                           result.note.value_or(""));
        if (adopted) {
          ++(kind == SourceKind::orders ? summary_.orders_adopted : summary_.returns_adopted);
          spdlog::debug("{} {}: adopted as {} from the result table", kind == SourceKind::orders ? "order" : "return",
                        text::printable(result.reference_id), *result.remote_id);
        }
        // A cancel the result records as sent (or being sent) that this ledger does not have as done:
        // the provider's status says whether to adopt it or to send it.
        const bool cancel_requested =
            kind == SourceKind::orders && (result.state == "cancelled" || result.state == "cancelling");
        const bool cancel_unknown_here =
            cancel_requested &&
            ledger_.find(LedgerKind::order_cancel, result.reference_id).value_or(LedgerEntry{}).state !=
                LedgerState::applied;
        if (adopted || cancel_unknown_here) {
          adopted_.push_back({kind, *result.remote_id, result.reference_id, hash, cancel_requested});
        }
      } else if (result.state == "unknown" || result.state == "in_flight" || result.state == "pending") {
        unsettled.push_back({kind, result.reference_id, hash, result.state != "pending",
                             timestamps::format_iso8601_z(result.updated_at)});
      }
    }
    batch.commit();
  }
}

void StoreRebuild::adopt_products() {
  std::string after;
  for (;;) {
    const auto results = results_.results_after(SourceKind::products, after, kResultPage);
    if (results.empty()) return;
    after = results.back().reference_id;
    // Those the ledger lacks as created (all of them, in a lost store; none, in a current one).
    std::vector<const merchant::SyncResult*> to_adopt;
    std::vector<std::string> keys;
    auto batch = ledger_.batch();
    for (const merchant::SyncResult& result : results) {
      const auto entry = ledger_.find(LedgerKind::product_create, result.reference_id);
      if (entry && (entry->state == LedgerState::created || entry->state == LedgerState::in_flight)) {
        forget_what_the_provider_holds_if_behind(result);
        continue;
      }
      to_adopt.push_back(&result);
      keys.push_back(result.reference_id);
    }
    if (keys.empty()) {
      batch.commit();
      continue;
    }
    std::map<std::string, merchant::ProductRow, std::less<>> rows;
    for (merchant::ProductRow& row : catalog_->source.read_products(keys)) {
      std::string key = row.reference_id;
      rows.emplace(std::move(key), std::move(row));
    }
    // A product without a remote_id (never created, its create unclear or refused) whose SKU the
    // provider's product list holds (variant_sync, as pull_stock read it) is that product: SKUs are
    // unique at the provider, and a create makes all its variants or none. One SKU tells.
    std::vector<std::string> first_skus;
    for (const merchant::SyncResult* result : to_adopt) {
      const auto row = rows.find(result->reference_id);
      if (result->remote_id || row == rows.end() || row->second.lines.empty()) continue;
      const merchant::Field& sku = row->second.lines.front().sku;
      if (sku.type == merchant::Field::Type::text) first_skus.push_back(sku.text);
    }
    const merchant::SkuMap listed = first_skus.empty() ? merchant::SkuMap{} : catalog_->pulled.sku_map(first_skus);
    for (const merchant::SyncResult* adopting : to_adopt) {
      const merchant::SyncResult& result = *adopting;
      const auto row = rows.find(result.reference_id);
      std::optional<std::int64_t> remote_id = result.remote_id;
      std::string_view note = result.note ? std::string_view(*result.note) : std::string_view();
      if (!remote_id && row != rows.end() && !row->second.lines.empty()) {
        const auto mapped = listed.find(row->second.lines.front().sku.text);
        if (mapped != listed.end()) {
          remote_id = mapped->second.product_id;
          note = kCreatedByAnEarlierSend;
        }
      }
      if (!remote_id) continue;  // not at the provider as far as is known: its create goes out (refused if it is)
      // `created` is the product as the merchant last wrote it; still that version, its body is what
      // the provider holds. (Changed since, an update under way or refused, or found by SKU: not known.)
      std::optional<std::string> body;
      if (result.remote_id && result.state == "created" && row != rows.end() &&
          row->second.content_hash == result.content_hash) {
        body = product_body(row->second, catalog_->version).body;
      }
      if (!ledger_.adopt(LedgerKind::product_create, result.reference_id, body ? row->second.content_hash : "",
                         *remote_id, "", iso(result.remote_created_at), note, body.value_or(""))) {
        continue;
      }
      ++summary_.products_adopted;
      if (!body) ++summary_.products_to_compare;
      spdlog::debug("product {}: adopted as {} from the result tables ({})", text::printable(result.reference_id),
                    *remote_id, body ? "as it was sent" : "to be compared with the provider");
    }
    batch.commit();
  }
}

void StoreRebuild::forget_what_the_provider_holds_if_behind(const merchant::SyncResult& result) {
  // Created in this store, but the result row is newer (an older store restored): a newer store
  // updated the product since, to a version this one does not know. Its next update reads the
  // provider first and sends what differs from the merchant's version, whatever this store last
  // sent: a field changed since and changed back is not left at the provider as the lost version has it.
  if (!result.remote_id || !behind({LedgerKind::product_create, LedgerKind::product_update}, result)) return;
  summary_.behind = true;
  const auto update = ledger_.find(LedgerKind::product_update, result.reference_id);
  if (update && (update->state == LedgerState::in_flight || update->state == LedgerState::unknown)) {
    // An update under way here is sent again as this store built it, from a base the newer store's
    // updates have moved on from: it reads the provider first, and sends what differs.
    const auto versions = decode_versions(update->body);
    if (!versions || versions->after.empty() ||
        !ledger_.replace_unsettled_body(LedgerKind::product_update, result.reference_id,
                                        encode_versions({.base = "", .after = versions->after}))) {
      return;
    }
  } else if (!ledger_.replace_settled(LedgerKind::product_update, result.reference_id,
                                      OutboundLedger::kVersionForgotten, *result.remote_id,
                                      encode_versions({.base = "", .after = ""}))) {
    return;
  }
  ++summary_.products_behind;
  spdlog::debug("product {}: the result tables are newer than the store: to be compared with the provider",
                text::printable(result.reference_id));
}

void StoreRebuild::look_up_unsettled(const std::vector<Unsettled>& unsettled) {
  auto batch = ledger_.batch();
  for (const Unsettled& row : unsettled) {
    // A pending result is a send that may have left only in a store that knew more than this one.
    if (!row.unclear && !summary_.behind) continue;
    const LedgerKind create = create_kind(row.kind);
    const auto entry = ledger_.find(create, row.reference_id);
    if (entry && entry->state != LedgerState::pending && entry->state != LedgerState::rejected) continue;
    // A send another process made may still be under way: its lookup waits, as after a send here.
    ledger_.look_up_first(create, row.reference_id, row.content_hash, kUnclearBeforeRebuild, kCreatedByAnEarlierSend,
                          row.unclear ? std::optional<std::string>(row.written_at) : std::nullopt);
    ++summary_.looked_up;
  }
  batch.commit();
}

asio::awaitable<void> StoreRebuild::check(api::ApiClient& client, api::ApiVersion version, const bool& stopping,
                                          std::chrono::milliseconds quiet) {
  if (summary_.behind && (!summary_.empty || summary_.looked_up > 0) && quiet > std::chrono::milliseconds::zero()) {
    spdlog::warn("checkpoint store {} is older than the merchant's result tables: waiting {} for requests the "
                 "process that used the newer store may have left under way, before anything is looked up or sent",
                 store_.path().string(), config::format_duration(quiet));
    // In steps, so that a stop is not kept waiting.
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (const auto until = std::chrono::steady_clock::now() + quiet;
         !stopping && std::chrono::steady_clock::now() < until;) {
      const std::chrono::steady_clock::duration left = until - std::chrono::steady_clock::now();
      timer.expires_after(std::min<std::chrono::steady_clock::duration>(kWaitStep, left));
      co_await timer.async_wait(asio::use_awaitable);
    }
    if (stopping) co_return;
  }
  api::Provider provider(api::call_of(client), version);
  for (const SourceKind kind : {SourceKind::orders, SourceKind::returns}) {
    std::vector<const Adopted*> of_kind;
    for (const Adopted& adopted : adopted_) {
      if (adopted.kind == kind) of_kind.push_back(&adopted);
    }
    const bool orders = kind == SourceKind::orders;
    for (std::size_t first = 0; first < of_kind.size(); first += kIdsPerRead) {
      if (stopping) co_return;
      const std::size_t last = std::min(first + kIdsPerRead, of_kind.size());
      std::vector<std::int64_t> ids;
      for (std::size_t i = first; i < last; ++i) ids.push_back(of_kind[i]->remote_id);
      std::map<std::int64_t, std::string> status_of;
      std::string why;
      bool read = false;
      if (orders) {
        const api::Answer<api::OrderPage> page = co_await provider.find_orders_by_id(ids, api::Priority::push);
        if (page) {
          for (const api::Order& order : *page) status_of.emplace(order.id, order.status);
        } else {
          why = page.why();
        }
        read = page.ok();
      } else {
        const api::Answer<api::ReturnList> list = co_await provider.find_returns_by_id(ids);
        if (list) {
          for (const api::ReturnOrder& item : list->items) status_of.emplace(item.id, item.status);
        } else {
          why = list.why();
        }
        read = list.ok();
      }
      ++summary_.calls;
      if (!read) {
        // What was adopted stays: the result tables recorded it from the provider's own answers.
        spdlog::warn("checking adopted {} at the provider failed ({}); going on without the check",
                     orders ? "orders" : "returns", why);
        co_return;
      }
      auto batch = ledger_.batch();
      for (std::size_t i = first; i < last; ++i) {
        const Adopted& adopted = *of_kind[i];
        const auto status = status_of.find(adopted.remote_id);
        if (status == status_of.end()) {
          ++summary_.missing;
          if (summary_.missing_references.size() < kMissingShown) {
            summary_.missing_references.push_back(text::printable(adopted.reference_id));
          }
          continue;
        }
        ++summary_.confirmed;
        if (!orders) continue;
        if (status->second == "Cancelled") {
          // Cancelled at the provider: the cancel is done, whatever the result table got to record.
          if (ledger_.adopt(LedgerKind::order_cancel, adopted.reference_id, adopted.content_hash, adopted.remote_id,
                            "Cancelled", "", "")) {
            ++summary_.cancels_adopted;
          }
        } else if (adopted.cancel_requested &&
                   ledger_.queue_cancel(adopted.reference_id, adopted.content_hash, kCancelNotShown)) {
          // The result says the cancel went (or was going) out; the provider does not show it.
          ++summary_.cancels_queued;
          spdlog::warn("order {}: the result table records the merchant's cancel, the provider shows it {}: the "
                       "cancel is sent again",
                       text::printable(adopted.reference_id), text::printable(status->second));
        }
      }
      batch.commit();
    }
  }
  summary_.checked = true;
  if (!adopted_.empty()) spdlog::warn("checkpoint store {}: {}", store_.path().string(), summary_.describe());
  if (summary_.missing > 0) {
    spdlog::error("{} adopted orders or returns are not at the provider under the id their result row holds (is "
                  "api.base_url the provider the result tables were written from?)",
                  summary_.missing);
  }
}

}  // namespace fulfillsync::daemon
