#include "sqlite_pulled_tables.hpp"

#include <map>

#include "result_pulled_tables.hpp"
#include "sqlite_contract.hpp"

namespace fulfillsync::merchant {
namespace {

class SqliteResultStatements final : public ResultStatements {
 public:
  explicit SqliteResultStatements(SqliteConnection& connection) : connection_(connection) {}

  std::string table(std::string_view name) const override { return connection_.table(name); }
  std::string source_table(std::string_view name) const override { return sql_name(name); }
  std::string holds_integer(std::string_view column) const override {
    return fmt::format("typeof({}) = 'integer'", sql_name(column));
  }
  bool source_has_column(std::string_view name, std::string_view column) override {
    return connection_.guarded(fmt::format("looking for {}.{}", name, column),
                               [&] { return column_exists(connection_.db(), name, column); });
  }

  void in_write_transaction(std::string_view task, const std::function<void()>& work) override {
    connection_.in_write_transaction(task, work);
  }

  int run(const std::string& sql, SqlValues values) override { return merchant::run(statement(sql), values); }

  std::unique_ptr<RowUpsert> upsert(std::string table, std::optional<OnConflict> on_conflict) override {
    if (!on_conflict) return std::make_unique<Upsert>(connection_.db(), std::move(table));
    return std::make_unique<Upsert>(connection_.db(), std::move(table), std::move(*on_conflict));
  }

  std::vector<Row> query(std::string_view task, const std::string& sql, SqlValues values) override {
    return connection_.guarded(task, [&] {
      SQLite::Statement& query = statement(sql);
      query.reset();
      const ClearedAfterUse cleared(query);
      for (const Named& named : values) {
        bind(query, query.getIndex(fmt::format(":{}", named.name).c_str()), named.value);
      }
      std::vector<Row> rows;
      while (query.executeStep()) {
        Row& row = rows.emplace_back();
        for (int i = 0; i < query.getColumnCount(); ++i) row.push_back(optional_text(query.getColumn(i)));
      }
      return rows;
    });
  }

 private:
  SQLite::Statement& statement(const std::string& sql) {
    auto& statement = statements_[sql];
    if (!statement) statement = std::make_unique<SQLite::Statement>(connection_.db(), sql);
    return *statement;
  }

  SqliteConnection& connection_;
  std::map<std::string, std::unique_ptr<SQLite::Statement>> statements_;
};

}  // namespace

std::unique_ptr<PulledTables> make_sqlite_pulled_tables(SqliteConnection& connection) {
  return std::make_unique<ResultPulledTables>(std::make_unique<SqliteResultStatements>(connection));
}

}  // namespace fulfillsync::merchant
