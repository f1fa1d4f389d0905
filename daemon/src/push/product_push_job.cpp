#include "push/product_push_job.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/common/invariant.hpp"
#include "fulfillsync/common/printable.hpp"
#include "fulfillsync/daemon/job/failpoints.hpp"
#include "fulfillsync/daemon/mapping/catalog_mapping.hpp"
#include "push/catalog_standing.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;
using namespace std::chrono_literals;
using api::OutcomeKind;

// An update about to be sent: the product's id at the provider and what changed, or, when what the
// provider holds is not known, the version to compare it with (its changes found once it is read).
struct ProductPushJob::PlannedUpdate {
  LedgerEntry entry;
  std::int64_t product_id = 0;
  std::optional<ProductChanges> changes;
  std::string after;
};

namespace {

constexpr auto kProducts = merchant::SourceKind::products;
// Products compared with the ledger per page, and pages per run.
constexpr std::size_t kPageSize = 250;
constexpr int kPagesPerRun = 4;
// Chunks of entries waiting in the ledger before the catalog is compared again.
constexpr int kQueuedChunks = 4;
// The version a requeued product's entry holds once the catalog has it no more: no row's hash.
constexpr std::string_view kNotInCatalog = "not in the catalog";

// A create the provider refused because one of its SKUs exists already: made by a send this ledger
// does not remember, or by hand. Looked up by SKU like an unclear send, never sent again blindly.
bool sku_exists(const api::Outcome& outcome) {
  return outcome.kind == OutcomeKind::rejected && outcome.detail.find("already exists") != std::string::npos;
}

std::string json_array(const std::vector<std::string>& objects) {
  std::string out = "[";
  for (const std::string& object : objects) out += fmt::format("{}{}", out.size() > 1 ? "," : "", object);
  return out + "]";
}

// An answer that came but does not read: whether the request did anything is unclear.
api::Outcome unclear_answer(const api::Outcome& outcome, const std::string& why) {
  api::Outcome unclear = outcome;
  unclear.kind = OutcomeKind::ambiguous;
  unclear.detail = fmt::format("the answer cannot be read: {}", why);
  return unclear;
}

}  // namespace

ProductPushJob::ProductPushJob(PushContext context, config::JobConfig config, merchant::SourceTables& source)
    : PushJob("push_products", context, config, nullptr), source_(source) {}

std::string ProductPushJob::failpoint_name(std::string_view step) const { return fmt::format("{}.{}", name(), step); }

int ProductPushJob::backlog() {
  return context_.ledger.waiting(LedgerKind::product_create) + context_.ledger.waiting(LedgerKind::product_update);
}

asio::awaitable<JobRun> ProductPushJob::run() {
  JobRun run;
  if (backoff_.holds(run)) co_return run;
  // Backpressure, as for orders: the catalog is compared again only while few entries wait.
  run.more = backlog() < kQueuedChunks * chunk_size() ? compare_catalog() : true;
  if (retake_requeued()) run.more = true;
  co_await reconcile(run);
  if (run.back_off == 0ms) co_await send_creates(run);
  if (run.back_off == 0ms) co_await send_updates(run);
  // Versions held behind a send that settled in this run go out in the next one, not at the next
  // change or interval (`once` would end without them).
  if (run.settled > 0 && !held_.empty() && offer_held()) run.more = true;
  co_await context_.results.flush_async(kProducts, name());
  co_return run;
}

bool ProductPushJob::compare_catalog() {
  if (!in_pass_) {
    // Asked at every run: triggers installed or dropped while the daemon runs are followed.
    const std::optional<std::string> position = source_.catalog_change_position();
    if (!position) {
      compared_through_.reset();  // nothing tells what changed: the whole catalog, every pass
    } else if (compared_through_) {
      return compare_changes();
    }
    // Whole: the first pass, or every pass without a change order. What commits from `position` on
    // is read by the next comparison of changes.
    in_pass_ = true;
    pass_position_ = position;
    pass_after_.clear();
    held_.clear();  // the pass offers them again
  }
  for (int page = 0; page < kPagesPerRun; ++page) {
    const std::vector<merchant::ProductRow> rows = source_.read_products(pass_after_, kPageSize);
    compare(rows);
    if (!rows.empty()) pass_after_ = rows.back().reference_id;
    if (rows.size() < kPageSize) {
      in_pass_ = false;
      if (pass_position_) source_.forget_catalog_changes_through(*pass_position_);
      compared_through_ = pass_position_;
      return false;
    }
  }
  return true;
}

bool ProductPushJob::compare_changes() {
  const merchant::ChangedKeys changes = source_.changes_after(kProducts, *compared_through_, kPageSize);
  // Versions held back behind a send are offered again: the position moves on without them.
  compare_with_held({changes.keys.begin(), changes.keys.end()});
  if (changes.entries > 0) source_.forget_catalog_changes_through(changes.through);
  compared_through_ = changes.through;
  return changes.more;
}

void ProductPushJob::compare(const std::vector<merchant::ProductRow>& rows) {
  // The versions the ledger holds, a few statements a page: a product it holds is looked at
  // further only when its version differs (the latest update's, else the create's).
  std::vector<std::string> keys;
  for (const merchant::ProductRow& row : rows) keys.push_back(row.reference_id);
  const auto created = context_.ledger.hashes(LedgerKind::product_create, keys);
  const auto updated = context_.ledger.hashes(LedgerKind::product_update, keys);
  auto batch = context_.ledger.batch();
  for (const merchant::ProductRow& row : rows) {
    const auto update = updated.find(row.reference_id);
    const auto create = created.find(row.reference_id);
    const std::string* held = update != updated.end() ? &update->second
                              : create != created.end() ? &create->second
                                                        : nullptr;
    if (held == nullptr || *held != row.content_hash) take(row);
  }
  batch.commit();
}

void ProductPushJob::compare_with_held(std::set<std::string> keys) {
  const std::set<std::string> were_held = std::exchange(held_, {});
  keys.insert(were_held.begin(), were_held.end());
  if (keys.empty()) return;
  try {
    compare(source_.read_products(std::vector<std::string>(keys.begin(), keys.end())));
  } catch (...) {
    held_.insert(were_held.begin(), were_held.end());  // the ledger's batch rolled back
    throw;
  }
}

bool ProductPushJob::offer_held() {
  compare_with_held({});
  return backlog() > 0;
}

bool ProductPushJob::retake_requeued() {
  OutboundLedger& ledger = context_.ledger;
  bool more = false;
  for (const LedgerKind kind : {LedgerKind::product_create, LedgerKind::product_update}) {
    const std::vector<std::string> keys =
        ledger.rejected_at_version(kind, OutboundLedger::kVersionForgotten, config_.batch_size);
    if (keys.empty()) continue;
    more = more || keys.size() == static_cast<std::size_t>(config_.batch_size);
    const std::vector<merchant::ProductRow> rows = source_.read_products(keys);
    auto batch = ledger.batch();
    for (const merchant::ProductRow& row : rows) {
      spdlog::info("product {}: requeued by an operator; taken again as the catalog has it",
                   text::printable(row.reference_id));
      take(row);
    }
    for (const std::string& key : keys) {
      const bool in_catalog = std::any_of(rows.begin(), rows.end(),
                                          [&](const merchant::ProductRow& row) { return row.reference_id == key; });
      if (in_catalog) continue;
      // Nothing to send; the product is taken again if it comes back.
      ledger.set_rejected_version(kind, key, kNotInCatalog);
      spdlog::warn("product {}: requeued by an operator, but {} has it no more", text::printable(key),
                   merchant::kProductsTable);
    }
    batch.commit();
  }
  return more;
}

void ProductPushJob::take(const merchant::ProductRow& row) {
  OutboundLedger& ledger = context_.ledger;
  const std::string& key = row.reference_id;
  const auto create = ledger.find(LedgerKind::product_create, key);
  if (!create || create->state != LedgerState::created) {
    const ProductBody built = product_body(row, context_.version);
    switch (ledger.offer(LedgerKind::product_create, key, row.content_hash, built.body.value_or(""), create)) {
      case Offer::queued:
        if (!built.body) {
          ledger.mark_rejected(LedgerKind::product_create, key, built.problems);
          context_.metrics.count_items(name(), "invalid");
          spdlog::warn("product {} rejected: {}", text::printable(key), built.problems);
        }
        break;
      case Offer::held: held_.insert(key); break;
      case Offer::unchanged:
      case Offer::already_sent: break;  // not for a create that is not created
    }
    return;
  }
  const auto update = ledger.find(LedgerKind::product_update, key);
  if ((update ? update->content_hash : create->content_hash) == row.content_hash) return;
  if (update && (update->state == LedgerState::in_flight || update->state == LedgerState::unknown)) {
    held_.insert(key);  // the update under way settles first; this version follows it
    return;
  }
  const std::string base = update_base(*create, update);
  const ProductBody built = product_body(row, context_.version);
  const std::string body = encode_versions({.base = base, .after = built.body.value_or("")});
  if (ledger.offer(LedgerKind::product_update, key, row.content_hash, body) != Offer::queued) return;
  if (!built.body) {
    ledger.mark_rejected(LedgerKind::product_update, key, built.problems);
    context_.metrics.count_items(name(), "invalid");
    spdlog::warn("product {}: its change is rejected: {}", text::printable(key), built.problems);
    return;
  }
  if (!base.empty()) {
    if (const auto changes = product_changes(base, *built.body)) note_what_the_provider_keeps(key, *changes);
  }
}

void ProductPushJob::note_what_the_provider_keeps(const std::string& key, const ProductChanges& changes) {
  // Set at every version: what an earlier one noted may be settled since.
  const std::string note = provider_keeps_note(changes);
  context_.ledger.set_note(LedgerKind::product_update, key, note);
  if (note.empty()) return;
  if (!changes.kept.empty()) {
    context_.metrics.count_items(name(), "not_cleared", static_cast<double>(changes.kept.size()));
  }
  spdlog::warn("product {}: {}", text::printable(key), note);
}

asio::awaitable<void> ProductPushJob::reconcile(JobRun& run) {
  OutboundLedger& ledger = context_.ledger;
  {
    // Every request of an update sets fields, and its variant creates look at the product's
    // variants first: sending an unclear one again is its lookup.
    const auto unclear_updates = ledger.unclear(LedgerKind::product_update, context_.unclear_lookup_delay,
                                                config_.batch_size);
    auto batch = ledger.batch();
    for (const LedgerEntry& entry : unclear_updates) {
      ledger.mark_pending(LedgerKind::product_update, entry.source_key,
                          "unclear whether the update was applied: sent again (its new variants looked up first)");
      context_.metrics.count_items(name(), "retried");
    }
    batch.commit();
  }
  const auto unknown = ledger.unclear(LedgerKind::product_create, context_.unclear_lookup_delay, config_.batch_size);
  if (unknown.size() == static_cast<std::size_t>(config_.batch_size)) run.more = true;
  for (const LedgerEntry& entry : unknown) {
    if (context_.stopping) co_return;
    const std::vector<std::string> skus = variant_skus(entry.body);
    std::optional<std::int64_t> found;
    if (!skus.empty()) {
      // One SKU tells: SKUs are unique at the provider, and a create makes all of its variants or none.
      api::Answer<api::ProductList> listed = co_await provider_.find_products_by_sku(skus.front());
      if (!listed) {
        spdlog::warn("{}: looking up unclear creates failed ({}); trying again later", name(), listed.why());
        run.ok = false;
        run.back_off = backoff_.note_failure(listed.outcome);
        co_return;
      }
      backoff_.note_success();
      for (const api::Product& product : listed->items) {
        const bool has_sku = std::any_of(product.variants.begin(), product.variants.end(),
                                         [&](const api::Variant& v) { return v.sku == skus.front(); });
        if (has_sku) found = product.id;
      }
    }
    failpoint(failpoint_name("after_reconcile_lookup"));
    auto batch = ledger.batch();
    if (found) {
      ledger.mark_created(LedgerKind::product_create, entry.source_key, *found, "");
      context_.metrics.count_items(name(), "adopted");
      spdlog::info("product {}: the provider has it as {}; adopted", text::printable(entry.source_key), *found);
      if (entry.note == kCreatedByAnEarlierSend) {
        // What the provider holds may be another version: an update compares it with this one (its
        // base not known, it reads the provider first) and sends what differs.
        ledger.offer(LedgerKind::product_update, entry.source_key, "",
                     encode_versions({.base = "", .after = entry.body}));
      }
    } else {
      ledger.mark_pending(LedgerKind::product_create, entry.source_key,
                          "not found at the provider after an unclear send");
      if (entry.note == kCreatedByAnEarlierSend) ledger.set_note(LedgerKind::product_create, entry.source_key, "");
      // What goes out next is the product as the merchant has it now.
      const std::string keys[] = {entry.source_key};
      for (const merchant::ProductRow& row : source_.read_products(keys)) take(row);
      context_.metrics.count_items(name(), "retried");
      spdlog::info("product {}: not at the provider; sending it as it is now", text::printable(entry.source_key));
    }
    batch.commit();
    ++run.settled;
  }
}

asio::awaitable<void> ProductPushJob::send_creates(JobRun& run) {
  if (context_.stopping) co_return;
  const std::vector<LedgerEntry> entries =
      context_.ledger.in_state(LedgerKind::product_create, LedgerState::pending, chunk_size());
  if (entries.size() == static_cast<std::size_t>(chunk_size())) run.more = true;
  if (entries.empty()) co_return;
  failpoint(failpoint_name("before_send"));
  std::vector<std::string> keys;
  for (const LedgerEntry& entry : entries) keys.push_back(entry.source_key);
  std::vector<api::Answer<api::Product>> answers(entries.size());
  const SendOne send_create = [&](std::size_t i, api::BeforeSend before_send) -> asio::awaitable<api::Outcome> {
    answers[i] = co_await provider_.create_product(entries[i].body, std::move(before_send));
    co_return answers[i].outcome;
  };
  const Announce announce = [&](std::vector<std::size_t> marked) -> asio::awaitable<void> {
    co_await context_.results.announce_sends(kProducts, entries, marked, name());
  };
  co_await send_marked(
      LedgerKind::product_create, keys, send_create, run,
      [&](std::size_t i, const api::Outcome&) { record_create(entries[i], answers[i], run); }, announce);
}

void ProductPushJob::record_create(const LedgerEntry& entry, const api::Answer<api::Product>& answer, JobRun& run) {
  OutboundLedger& ledger = context_.ledger;
  const std::string& key = entry.source_key;
  const api::Outcome& outcome = answer.outcome;
  if (sku_exists(outcome)) {
    ledger.mark_unknown(LedgerKind::product_create, key, outcome.detail);
    ledger.set_note(LedgerKind::product_create, key, kCreatedByAnEarlierSend);
    context_.metrics.count_items(name(), "unknown");
    spdlog::info("product {}: the provider has one of its SKUs already ({}); looking it up", text::printable(key),
                 outcome.detail);
    run.more = true;
    return;
  }
  switch (outcome.kind) {
    case OutcomeKind::success:
      if (answer.value) {
        ledger.mark_created(LedgerKind::product_create, key, answer.value->id, "");
        context_.metrics.count_items(name(), "created");
        spdlog::debug("product {} created as {}", text::printable(key), answer.value->id);
      } else {
        ledger.mark_unknown(LedgerKind::product_create, key, "created, but the answer cannot be read: " + answer.why());
        context_.metrics.count_items(name(), "unknown");
        spdlog::warn("product {}: created, but the answer cannot be read ({}); looking it up", text::printable(key),
                     answer.why());
      }
      backoff_.note_success();
      ++run.settled;
      return;
    case OutcomeKind::rejected:
      ledger.mark_rejected(LedgerKind::product_create, key, outcome.detail);
      context_.metrics.count_items(name(), "rejected");
      spdlog::warn("product {} rejected by the provider: {}", text::printable(key), outcome.detail);
      backoff_.note_success();
      ++run.settled;
      return;
    case OutcomeKind::duplicate_reference:
    case OutcomeKind::ambiguous:
      ledger.mark_unknown(LedgerKind::product_create, key, outcome.detail);
      context_.metrics.count_items(name(), "unknown");
      spdlog::info("product {}: unclear whether it was created ({}); looking it up before any new send",
                   text::printable(key), outcome.detail);
      run.more = true;
      return;
    case OutcomeKind::throttled:
    case OutcomeKind::unauthorized:
    case OutcomeKind::forbidden:
    case OutcomeKind::not_sent:
      requeue_unsent(LedgerKind::product_create, key, outcome, run);
      return;
  }
}

asio::awaitable<void> ProductPushJob::send_updates(JobRun& run) {
  if (context_.stopping) co_return;
  OutboundLedger& ledger = context_.ledger;
  const std::vector<LedgerEntry> entries = ledger.in_state(LedgerKind::product_update, LedgerState::pending, chunk_size());
  if (entries.size() == static_cast<std::size_t>(chunk_size())) run.more = true;
  std::vector<PlannedUpdate> planned;
  {
    auto batch = ledger.batch();
    for (const LedgerEntry& entry : entries) {
      const auto create = ledger.find(LedgerKind::product_create, entry.source_key);
      FULFILLSYNC_INVARIANT(create && create->remote_id, "a product's update is queued only once it is created");
      const auto versions = decode_versions(entry.body);
      if (versions && !versions->after.empty() && versions->base.empty()) {
        // What the provider holds is not known: the update reads it first.
        planned.push_back({.entry = entry, .product_id = *create->remote_id, .changes = std::nullopt,
                           .after = versions->after});
        continue;
      }
      const auto changes = versions && !versions->after.empty() ? product_changes(versions->base, versions->after)
                                                                 : std::nullopt;
      if (!changes) {
        ledger.mark_rejected(LedgerKind::product_update, entry.source_key,
                             "the change cannot be read back from the checkpoint store; change the row to send it");
        context_.metrics.count_items(name(), "invalid");
        continue;
      }
      if (changes->sends_nothing()) {
        // Nothing the provider holds differs (a column that is not sent changed, or a variant was removed).
        ledger.mark_in_flight(LedgerKind::product_update, entry.source_key);
        ledger.mark_applied(LedgerKind::product_update, entry.source_key, *create->remote_id, "");
        ++run.settled;
        continue;
      }
      planned.push_back({.entry = entry, .product_id = *create->remote_id, .changes = *changes, .after = {}});
    }
    batch.commit();
  }
  if (planned.empty()) co_return;
  failpoint(failpoint_name("before_update"));
  std::vector<std::string> keys;
  std::vector<LedgerEntry> updates;
  for (const PlannedUpdate& update : planned) {
    keys.push_back(update.entry.source_key);
    updates.push_back(update.entry);
  }
  std::vector<api::Outcome> outcomes(planned.size());
  const SendOne send_update = [&](std::size_t i, api::BeforeSend before_send) -> asio::awaitable<api::Outcome> {
    outcomes[i] = co_await update(planned[i], std::move(before_send));
    co_return outcomes[i];
  };
  // Announced as creates are: a store restored from an older copy, which cannot know this version
  // left, then compares the product with the provider instead of taking its own last version as held.
  const Announce announce = [&](std::vector<std::size_t> marked) -> asio::awaitable<void> {
    co_await context_.results.announce_sends(kProducts, updates, marked, name());
  };
  co_await send_marked(
      LedgerKind::product_update, keys, send_update, run,
      [&](std::size_t i, const api::Outcome&) { record_update(planned[i], outcomes[i], run); }, announce);
}

asio::awaitable<api::Outcome> ProductPushJob::update(PlannedUpdate& planned, api::BeforeSend before_send) {
  api::Outcome last;
  if (!planned.changes) {
    // Not known what the provider holds: read it, and send only what differs from the merchant's version.
    api::BeforeSend first = std::exchange(before_send, api::BeforeSend{});
    last = co_await provider_.product(planned.product_id, std::move(first));
    if (!last.ok()) co_return last;
    const auto held = provider_version(last.response.body, planned.after);
    if (!held) co_return unclear_answer(last, "not a product");
    planned.changes = product_changes(*held, planned.after);
    FULFILLSYNC_INVARIANT(planned.changes, "provider_version writes a product body");
    if (planned.changes->sends_nothing()) co_return last;
  }
  const ProductChanges& changes = *planned.changes;
  if (!changes.product_patch.empty()) {
    api::BeforeSend first = std::exchange(before_send, api::BeforeSend{});
    last = co_await provider_.update_product(planned.product_id, changes.product_patch, std::move(first));
    if (!last.ok()) co_return last;
    failpoint(failpoint_name("between_requests"));
  }
  if (changes.new_variants.empty() && changes.changed_variants.empty()) co_return last;
  // What the provider has of the product's variants: a SKU it has already (an earlier send of this
  // update whose answer was lost) is set, never created again.
  api::BeforeSend first = std::exchange(before_send, api::BeforeSend{});
  const api::Answer<api::VariantList> present = co_await provider_.product_variants(planned.product_id, std::move(first));
  if (!present) co_return present.outcome.ok() ? unclear_answer(present.outcome, present.why()) : present.outcome;
  std::map<std::string, std::int64_t, std::less<>> ids;
  for (const api::Variant& variant : *present) {
    if (variant.sku) ids.emplace(*variant.sku, variant.id);
  }
  std::vector<std::string> creates, patches;
  for (const auto& [sku, whole] : changes.new_variants) {
    const auto id = ids.find(sku);
    if (id == ids.end()) creates.push_back(whole);
    else patches.push_back(with_variant_id(id->second, whole));
  }
  for (const auto& [sku, changed] : changes.changed_variants) {
    const auto id = ids.find(sku);
    if (id == ids.end()) {
      api::Outcome missing;
      missing.kind = OutcomeKind::rejected;
      missing.detail = fmt::format("variant '{}' is not at the provider (removed there?): change its SKU or re-add it "
                                   "at the provider",
                                   text::printable(sku));
      co_return missing;
    }
    patches.push_back(with_variant_id(id->second, changed));
  }
  if (!creates.empty()) {
    const api::Answer<api::VariantList> created =
        co_await provider_.create_variants(planned.product_id, json_array(creates));
    if (!created.outcome.ok()) co_return created.outcome;
    last = created.outcome;
    failpoint(failpoint_name("between_requests"));
  }
  if (!patches.empty()) last = co_await provider_.update_variants(planned.product_id, json_array(patches));
  co_return last;
}

void ProductPushJob::record_update(const PlannedUpdate& planned, const api::Outcome& outcome, JobRun& run) {
  OutboundLedger& ledger = context_.ledger;
  const std::string& key = planned.entry.source_key;
  switch (outcome.kind) {
    case OutcomeKind::success:
      ledger.mark_applied(LedgerKind::product_update, key, planned.product_id, "");
      if (!planned.after.empty()) {
        // Compared with what the provider holds: its variants the merchant lacks are known only now,
        // and a create adopted without its version is at the merchant's version now.
        if (planned.changes) note_what_the_provider_keeps(key, *planned.changes);
        const auto create = ledger.find(LedgerKind::product_create, key);
        if (create && create->note == kCreatedByAnEarlierSend) ledger.set_note(LedgerKind::product_create, key, "");
      }
      context_.metrics.count_items(name(), "updated");
      backoff_.note_success();
      ++run.settled;
      return;
    case OutcomeKind::rejected:
      ledger.mark_rejected(LedgerKind::product_update, key, outcome.detail);
      context_.metrics.count_items(name(), "rejected");
      spdlog::warn("product {}: its change was rejected by the provider: {}", text::printable(key), outcome.detail);
      backoff_.note_success();
      ++run.settled;
      return;
    case OutcomeKind::duplicate_reference:
    case OutcomeKind::ambiguous:
      ledger.mark_unknown(LedgerKind::product_update, key, outcome.detail);
      context_.metrics.count_items(name(), "unknown");
      spdlog::info("product {}: unclear whether its change was applied ({}); sending it again later",
                   text::printable(key), outcome.detail);
      run.more = true;
      return;
    case OutcomeKind::throttled:
    case OutcomeKind::unauthorized:
    case OutcomeKind::forbidden:
    case OutcomeKind::not_sent:
      requeue_unsent(LedgerKind::product_update, key, outcome, run);
      return;
  }
}

}  // namespace fulfillsync::daemon
