#pragma once
#include <filesystem>
#include <memory>

#include "fulfillsync/merchant/merchant_database.hpp"

namespace SQLite {
class Database;
}

namespace fulfillsync::merchant {

class SqliteMerchantDatabase final : public MerchantDatabase {
 public:
  // The file must exist: it belongs to the merchant's application, which creates it.
  explicit SqliteMerchantDatabase(const config::SqliteConfig& config);
  ~SqliteMerchantDatabase() override;

  std::string describe() const override;
  void ping() override;

 private:
  std::filesystem::path path_;
  std::unique_ptr<SQLite::Database> db_;
};

}  // namespace fulfillsync::merchant
