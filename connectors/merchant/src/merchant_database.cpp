#include "fulfillsync/merchant/merchant_database.hpp"

#include "fulfillsync/merchant/sqlite_merchant_database.hpp"

namespace fulfillsync::merchant {

namespace {
[[noreturn]] void no_change_log() { throw MerchantDatabaseError("the source tables keep no change log"); }
}  // namespace

std::string MerchantDatabase::change_log_end(SourceKind) { no_change_log(); }
ChangedKeys MerchantDatabase::changes_after(SourceKind, std::string_view, std::size_t) { no_change_log(); }
std::int64_t MerchantDatabase::count_rows_changed_after(SourceKind, std::string_view) { no_change_log(); }
bool MerchantDatabase::install_change_log() { no_change_log(); }
std::int64_t MerchantDatabase::forget_changes_through(SourceKind, std::string_view, std::size_t) { no_change_log(); }
bool MerchantDatabase::changes_forgotten_after(SourceKind, std::string_view) { no_change_log(); }

std::unique_ptr<MerchantDatabase> open_merchant_database(const config::MerchantConfig& config) {
  switch (config.driver) {
    case config::MerchantDriver::sqlite: return std::make_unique<SqliteMerchantDatabase>(config);
  }
  throw MerchantDatabaseError("unknown merchant database driver");
}

std::unique_ptr<MerchantDatabase> open_merchant_database_read_only(const config::MerchantConfig& config) {
  switch (config.driver) {
    case config::MerchantDriver::sqlite:
      return std::make_unique<SqliteMerchantDatabase>(config, SqliteMerchantDatabase::Access::read_only);
  }
  throw MerchantDatabaseError("unknown merchant database driver");
}

}  // namespace fulfillsync::merchant
