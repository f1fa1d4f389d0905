#include "postgres_pulled_tables.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "result_pulled_tables.hpp"

namespace fulfillsync::merchant {
namespace {

class PostgresResultStatements final : public ResultStatements {
 public:
  explicit PostgresResultStatements(PostgresConnection& connection) : connection_(connection) {}

  std::string table(std::string_view name) const override { return connection_.result_table(name); }
  std::string source_table(std::string_view name) const override { return connection_.source_table(name); }
  // Columns hold their declared type.
  std::string holds_integer(std::string_view column) const override {
    return fmt::format("{} IS NOT NULL", sql_name(column));
  }
  bool source_has_column(std::string_view name, std::string_view column) override {
    return connection_.source_has_column(name, column);
  }

  void in_write_transaction(std::string_view task, const std::function<void()>& work) override {
    connection_.in_transaction(task, PostgresConnection::Transaction::write, work);
  }

  int run(const std::string& sql, SqlValues values) override {
    return connection_.run("writing the result tables", numbered(sql, values), parameters(values)).changed();
  }

  std::unique_ptr<RowUpsert> upsert(std::string table, std::optional<OnConflict> on_conflict) override {
    return std::make_unique<PgUpsert>(connection_, std::move(table), std::move(on_conflict));
  }

  void run_unread(const std::string& sql, SqlValues values) override {
    connection_.run_later("writing the result tables", numbered(sql, values), parameters(values));
  }

  std::vector<Row> query(std::string_view task, const std::string& sql, SqlValues values) override {
    const PgResult result = connection_.run(task, numbered(sql, values), parameters(values));
    std::vector<Row> rows;
    for (int r = 0; r < result.rows(); ++r) {
      Row& row = rows.emplace_back();
      for (int c = 0; c < PQnfields(result.raw()); ++c) row.push_back(result.optional_text(r, c));
    }
    return rows;
  }

 private:
  // `sql` with `$n` parameters, numbered once per statement and order of values: a page of shipments
  // runs each of its statements hundreds of times.
  const std::string& numbered(const std::string& sql, SqlValues values) {
    Numbered& made = numbered_[sql];
    const bool same_names = made.names.size() == values.size() &&
                            std::equal(values.begin(), values.end(), made.names.begin(),
                                       [](const Named& value, const std::string& name) { return value.name == name; });
    if (!same_names || made.sql.empty()) {
      made.sql = numbered_parameters(sql, values);
      made.names.assign(values.size(), {});
      for (std::size_t i = 0; i < values.size(); ++i) made.names[i] = values[i].name;
    }
    return made.sql;
  }

  struct Numbered {
    std::vector<std::string> names;
    std::string sql;
  };
  PostgresConnection& connection_;
  std::unordered_map<std::string, Numbered> numbered_;
};

}  // namespace

std::unique_ptr<PulledTables> make_postgres_pulled_tables(PostgresConnection& connection) {
  return std::make_unique<ResultPulledTables>(std::make_unique<PostgresResultStatements>(connection));
}

}  // namespace fulfillsync::merchant
