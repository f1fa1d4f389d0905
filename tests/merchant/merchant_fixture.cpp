#include "merchant_fixture.hpp"

#include <SQLiteCpp/Statement.h>

namespace fulfillsync::merchant {

MerchantDatabaseTest::MerchantDatabaseTest()
    : path(dir / "shop.db"), app(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE) {
  app.exec("PRAGMA journal_mode = WAL");
  app.exec("PRAGMA synchronous = OFF");  // the test's own writes need no durability
  app.exec(testing::read_file(testing::source_path("schema/merchant/source_tables.sql")));
  app.exec(testing::read_file(testing::source_path("schema/merchant/change_log/0001_change_log.sql")));
}

config::MerchantConfig MerchantDatabaseTest::config(std::string prefix) const {
  config::MerchantConfig config;
  config.sqlite.path = path;
  config.sqlite.busy_timeout = std::chrono::milliseconds(2000);
  config.result_table_prefix = std::move(prefix);
  return config;
}

std::unique_ptr<SqliteMerchantDatabase> MerchantDatabaseTest::open(std::string prefix) const {
  return std::make_unique<SqliteMerchantDatabase>(config(std::move(prefix)));
}

void MerchantDatabaseTest::add_order(const std::string& reference_id, const std::string& updated_at, int lines) {
  for (int line = 1; line <= lines; ++line) {
    SQLite::Statement insert(app,
                             "INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, "
                             "product_reference_id, product_name, quantity) VALUES (?, ?, 'TSHIRT-M', 'T-Shirt M', ?)");
    insert.bind(1, reference_id);
    insert.bind(2, line);
    insert.bind(3, line);
    insert.exec();
  }
  SQLite::Statement insert(app,
                           "INSERT INTO fulfillsync_orders (reference_id, shipping_method, recipient_name, address1, "
                           "city, zip_code, country, updated_at) VALUES (?, 'Standard', 'Ada Lovelace', "
                           "'12 St James''s Square', 'London', 'SW1Y 4JH', 'GB', ?)");
  insert.bind(1, reference_id);
  insert.bind(2, updated_at);
  insert.exec();
}

void MerchantDatabaseTest::add_return(const std::string& reference_id, const std::string& updated_at) {
  SQLite::Statement line(app,
                         "INSERT INTO fulfillsync_return_lines (return_reference_id, line_number, inventory_id, "
                         "quantity, requested_action) VALUES (?, 1, 7002, 1, 'Restock')");
  line.bind(1, reference_id);
  line.exec();
  SQLite::Statement insert(app,
                           "INSERT INTO fulfillsync_returns (reference_id, fulfillment_center_id, updated_at) "
                           "VALUES (?, 8, ?)");
  insert.bind(1, reference_id);
  insert.bind(2, updated_at);
  insert.exec();
}

}  // namespace fulfillsync::merchant
