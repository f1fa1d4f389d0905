#include "push/catalog_standing.hpp"

#include <algorithm>
#include <cctype>

#include "fulfillsync/common/printable.hpp"
#include "fulfillsync/daemon/mapping/catalog_mapping.hpp"

namespace fulfillsync::daemon {
namespace {

// Products read per page, as push_products compares them.
constexpr std::size_t kPageSize = 250;

// A variant's SKU as the rules read it: text, or an integer's digits.
std::optional<std::string> sku_of(const merchant::VariantRow& variant) {
  if (variant.sku.type == merchant::Field::Type::integer) return std::to_string(variant.sku.integer);
  if (variant.sku.type == merchant::Field::Type::text && !variant.sku.text.empty()) return variant.sku.text;
  return std::nullopt;
}

bool unclear(LedgerState state) { return state == LedgerState::in_flight || state == LedgerState::unknown; }

// Whether `text` holds `word` not as a part of a longer SKU ("A-1" is not in "A-10").
bool names(std::string_view text, std::string_view word) {
  const auto part_of_word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
  };
  for (std::size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !part_of_word(text[at - 1]);
    const std::size_t end = at + word.size();
    if (starts && (end == text.size() || !part_of_word(text[end]))) return true;
  }
  return false;
}

}  // namespace

ProductStanding standing_of(std::string_view content_hash, const OutboundLedger::HeldVersion* create,
                            const OutboundLedger::HeldVersion* update) {
  if (create == nullptr) return ProductStanding::to_create;
  if (create->state != LedgerState::created) {
    if (unclear(create->state)) return ProductStanding::create_unclear;
    if (create->content_hash != content_hash) return ProductStanding::to_create;
    return create->state == LedgerState::rejected ? ProductStanding::create_rejected : ProductStanding::create_queued;
  }
  if (update == nullptr) return create->content_hash == content_hash ? ProductStanding::up_to_date
                                                                     : ProductStanding::to_update;
  if (unclear(update->state)) return ProductStanding::update_unclear;
  if (update->content_hash != content_hash) return ProductStanding::to_update;
  switch (update->state) {
    case LedgerState::pending: return ProductStanding::update_queued;
    case LedgerState::rejected: return ProductStanding::update_rejected;
    default: return ProductStanding::up_to_date;
  }
}

std::string update_base(const LedgerEntry& create, const std::optional<LedgerEntry>& update) {
  if (update) {
    if (const auto versions = decode_versions(update->body)) {
      if (update->state == LedgerState::applied) {
        return versions->base.empty() ? versions->after
                                      : applied_version(versions->base, versions->after).value_or("");
      }
      return update->attempts > 0 ? std::string() : versions->base;
    }
  }
  return create.body;
}

void for_each_product(merchant::SourceTables& source, OutboundLedger* ledger,
                      const std::function<void(const merchant::ProductRow&, ProductStanding)>& visit) {
  std::string after;
  for (bool more = true; more;) {
    const std::vector<merchant::ProductRow> rows = source.read_products(after, kPageSize);
    more = rows.size() == kPageSize;
    if (rows.empty()) break;
    after = rows.back().reference_id;
    std::vector<std::string> keys;
    for (const merchant::ProductRow& row : rows) keys.push_back(row.reference_id);
    std::map<std::string, OutboundLedger::HeldVersion, std::less<>> creates, updates;
    if (ledger != nullptr) {
      creates = ledger->held_versions(LedgerKind::product_create, keys);
      updates = ledger->held_versions(LedgerKind::product_update, keys);
    }
    for (const merchant::ProductRow& row : rows) {
      const auto create = creates.find(row.reference_id);
      const auto update = updates.find(row.reference_id);
      visit(row, standing_of(row.content_hash, create == creates.end() ? nullptr : &create->second,
                             update == updates.end() ? nullptr : &update->second));
    }
  }
}

std::vector<std::string> skus_named(const merchant::ProductRow& row, std::string_view reason) {
  std::vector<std::string> skus;
  for (const merchant::VariantRow& variant : row.lines) {
    const auto sku = sku_of(variant);
    if (!sku) continue;
    const std::string shown = text::printable(*sku);
    if (names(reason, shown) && std::find(skus.begin(), skus.end(), shown) == skus.end()) skus.push_back(shown);
  }
  return skus;
}

bool ledger_holds_catalog(OutboundLedger& ledger) {
  for (const auto& [kind_state, count] : ledger.backlog()) {
    if (builds_from_source(kind_state.first) && count > 0) return true;
  }
  return false;
}

namespace {

CatalogRejection rejection_of(const LedgerEntry& entry) {
  return {.kind = entry.kind,
          .reference_id = entry.source_key,
          .skus = {},
          .at = entry.updated_at,
          .reason = text::printable(entry.last_error)};
}

void newest_first(std::vector<CatalogRejection>& rejections, std::size_t listed) {
  std::stable_sort(rejections.begin(), rejections.end(),
                   [](const CatalogRejection& a, const CatalogRejection& b) { return a.at > b.at; });
  if (rejections.size() > listed) rejections.resize(listed);
}

// From the ledger alone: each product counted once, by its create until it is created, then by its update.
CatalogBacklog ledger_backlog(OutboundLedger& ledger, std::size_t listed) {
  CatalogBacklog backlog;
  for (const auto& [kind_state, count] : ledger.backlog()) {
    const auto [kind, state] = kind_state;
    if (!builds_from_source(kind)) continue;
    if (unclear(state)) backlog.unclear += count;
    else if (state == LedgerState::rejected) backlog.rejected += count;
    else if (state == LedgerState::pending && kind == LedgerKind::product_update) backlog.changes_unsent += count;
    else if (state == LedgerState::pending || state == LedgerState::withdrawn) backlog.not_created += count;
  }
  for (const LedgerEntry& entry :
       ledger.latest(LedgerState::rejected, static_cast<int>(listed), OutboundLedger::Kinds::catalog)) {
    backlog.rejections.push_back(rejection_of(entry));
  }
  return backlog;
}

}  // namespace

CatalogBacklog catalog_backlog(OutboundLedger& ledger, merchant::SourceTables* source, std::size_t rejections_listed) {
  if (source == nullptr) {
    CatalogBacklog backlog = ledger_backlog(ledger, rejections_listed);
    backlog.source_problem = "the merchant database cannot be opened";
    return backlog;
  }
  CatalogBacklog backlog;
  std::int64_t products = 0;
  try {
    for_each_product(*source, &ledger, [&](const merchant::ProductRow& row, ProductStanding standing) {
      ++products;
      switch (standing) {
        case ProductStanding::to_create:
        case ProductStanding::create_queued: ++backlog.not_created; break;
        case ProductStanding::to_update:
        case ProductStanding::update_queued: ++backlog.changes_unsent; break;
        case ProductStanding::create_unclear:
        case ProductStanding::update_unclear: ++backlog.unclear; break;
        case ProductStanding::create_rejected:
        case ProductStanding::update_rejected: {
          ++backlog.rejected;
          const LedgerKind kind = standing == ProductStanding::create_rejected ? LedgerKind::product_create
                                                                               : LedgerKind::product_update;
          if (const auto entry = ledger.find(kind, row.reference_id)) {
            CatalogRejection rejection = rejection_of(*entry);
            rejection.skus = skus_named(row, rejection.reason);
            backlog.rejections.push_back(std::move(rejection));
          }
          break;
        }
        case ProductStanding::up_to_date: break;
      }
    });
  } catch (const merchant::MerchantDatabaseError& e) {
    CatalogBacklog from_ledger = ledger_backlog(ledger, rejections_listed);
    from_ledger.source_problem = text::printable(e.what());
    return from_ledger;
  }
  backlog.products = products;
  newest_first(backlog.rejections, rejections_listed);
  return backlog;
}

std::vector<std::string> products_with_sku(merchant::SourceTables& source, std::string_view sku) {
  std::vector<std::string> products;
  for_each_product(source, nullptr, [&](const merchant::ProductRow& row, ProductStanding) {
    const bool has = std::any_of(row.lines.begin(), row.lines.end(), [&](const merchant::VariantRow& variant) {
      return sku_of(variant) == sku;
    });
    if (has) products.push_back(row.reference_id);
  });
  return products;
}

}  // namespace fulfillsync::daemon
