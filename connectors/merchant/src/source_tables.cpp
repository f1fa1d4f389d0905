#include "fulfillsync/merchant/source_tables.hpp"

namespace fulfillsync::merchant {
namespace {
[[noreturn]] void no_change_log() { throw MerchantDatabaseError("the source tables keep no change log"); }
}  // namespace

// Source tables without a change order of their own are read by (updated_at, reference_id) only.
std::string SourceTables::change_log_end(SourceKind) { no_change_log(); }
ChangedKeys SourceTables::changes_after(SourceKind, std::string_view, std::size_t) { no_change_log(); }
std::int64_t SourceTables::count_rows_changed_after(SourceKind, std::string_view) { no_change_log(); }
bool SourceTables::install_change_log() { no_change_log(); }
std::int64_t SourceTables::forget_changes_through(SourceKind, std::string_view, std::size_t) { no_change_log(); }
bool SourceTables::changes_forgotten_after(SourceKind, std::string_view) { no_change_log(); }

std::vector<std::string> SourceTables::check_catalog_tables() {
  return {"this merchant database does not read the catalog"};
}
std::vector<ProductRow> SourceTables::read_products(std::string_view, std::size_t) {
  throw MerchantDatabaseError("this merchant database does not read the catalog");
}
std::vector<ProductRow> SourceTables::read_products(std::span<const std::string>) {
  throw MerchantDatabaseError("this merchant database does not read the catalog");
}
std::optional<std::string> SourceTables::catalog_change_position() { return std::nullopt; }
void SourceTables::forget_catalog_changes_through(std::string_view) {}
SourceTables::CatalogUpgrade SourceTables::install_catalog_change_order() { no_change_log(); }

}  // namespace fulfillsync::merchant
