#pragma once
// Values bound to SQL statements and the upserts built from them, written once for both merchant
// databases: SQLite binds them to `:name` parameters (sqlite_support.hpp), PostgreSQL sends them as
// text parameters `$n` (postgres_support.hpp). The SQL they are bound to is the same but for the
// parameters' names.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/merchant/source_rows.hpp"

namespace fulfillsync::merchant {

// A value to bind: NULL, an integer or text. Converts, implicitly so that a row reads as columns
// and values, from what the records hold: an absent optional is NULL, a bool 0 or 1, and a time the
// contract's text (UTC ISO 8601 with milliseconds).
class SqlValue {
 public:
  using Value = std::variant<std::monostate, std::int64_t, std::string>;

  SqlValue(std::nullopt_t) {}
  SqlValue(std::int64_t value) : value_(value) {}
  SqlValue(int value) : value_(std::int64_t{value}) {}
  SqlValue(bool value) : value_(std::int64_t{value}) {}
  SqlValue(std::string value) : value_(std::move(value)) {}
  SqlValue(std::string_view value) : value_(std::string(value)) {}
  SqlValue(const char* value) : value_(std::string(value)) {}  // else a literal would be taken for a bool
  SqlValue(timestamps::TimePoint value) : value_(timestamps::format_iso8601_z(value)) {}
  template <typename T>
  SqlValue(const std::optional<T>& value) {
    if (value) *this = SqlValue(*value);
  }

  const Value& value() const { return value_; }
  // As text (an integer in decimal); NULL is nothing.
  std::optional<std::string> text() const;

 private:
  Value value_{};
};

// One value named by its column, or by its parameter in SQL written with `:name` parameters.
struct Named {
  std::string_view name;
  SqlValue value;
};
using SqlValues = std::span<const Named>;

// What a row whose key is held already does instead of failing. In `set` and `where`, the row held
// is `t` and the row offered `excluded` (PostgreSQL needs the held row named; SQLite accepts it).
struct OnConflict {
  std::vector<std::string_view> key;            // ON CONFLICT (key): never updated
  std::vector<std::string_view> insert_only{};  // also kept as first written
  // Assignments written out, in place of `column = excluded.column` (a column not inserted is
  // added), e.g. a CASE that keeps what the row holds.
  std::vector<std::pair<std::string_view, std::string>> set{};
  std::string where{};  // the row is updated only where this holds ("" always)
};

// INSERT INTO table AS t ("a", "b") VALUES (<a>, <b>)[, (<a>, <b>)...] [ON CONFLICT ("a") DO UPDATE SET
// "b" = excluded."b" WHERE ...] [RETURNING "a"]: `rows` rows of the columns `row` names, each value's
// parameter written by `parameter(index, name)`, its index counted over the statement (row r's column
// i is r * columns + i), and the conflict's key returned when `returning_key`. `table` is quoted already.
std::string upsert_sql(std::string_view table, SqlValues row, const std::optional<OnConflict>& on_conflict,
                       const std::function<std::string(std::size_t index, std::string_view name)>& parameter,
                       std::size_t rows = 1, bool returning_key = false);

// Rows per statement of many rows: a run of rows is cut into statements of these sizes, largest
// first, so that a write has a few statement texts, each reused.
inline constexpr std::size_t kRowsPerStatement[] = {64, 16, 4, 1};

// The values of the columns `key` of `row`, as text, each after the first following kKeySeparator:
// what tells two rows of a table apart.
std::string key_text(SqlValues row, std::span<const std::string_view> key);
inline constexpr char kKeySeparator = '\x1f';

// `rows` cut into statements of many rows that write them as one after the other would: a new run
// of rows wherever a key comes again (one upsert may not write a row twice: PostgreSQL refuses it),
// each run in statements of kRowsPerStatement rows. No key: one run.
std::vector<std::span<const std::vector<Named>>> statements_of_rows(std::span<const std::vector<Named>> rows,
                                                                    std::span<const std::string_view> key);

// Rows upserted into one table (upsert_sql), as each database writes them. The first row fixes the
// columns; every later row names the same ones in the same order. Statements are written (and where
// they can be, prepared) once and kept for the next rows.
class RowUpsert {
 public:
  virtual ~RowUpsert() = default;
  // One row. Returns how many rows it changed: 0 when the conflict's `where` kept the row held.
  virtual int write(SqlValues row) = 0;
  int write(std::initializer_list<Named> row) { return write(SqlValues(row.begin(), row.size())); }
  // The same, for a row whose count is not read: a database may send it later, with the next
  // statement whose result is read or with the commit, in one round trip (PostgreSQL does).
  virtual void write_unread(SqlValues row) { write(row); }
  void write_unread(std::initializer_list<Named> row) { write_unread(SqlValues(row.begin(), row.size())); }

  // Writes `rows` as writing them one after the other would, in a few statements of many rows each
  // (a statement's own cost, and in PostgreSQL its round trip, shared by its rows), and returns what
  // each row changed. Rows are told apart by the conflict's key, which the statements return.
  std::vector<int> write_each(std::span<const std::vector<Named>> rows);
  // The same, what each changed not read: a database may send them later, as write_unread.
  void write_all(std::span<const std::vector<Named>> rows);

 protected:
  RowUpsert(std::string table, std::optional<OnConflict> on_conflict);

  // One statement of many rows: its SQL (upsert_sql with `parameter`), and its rows.
  struct Batch {
    const std::string* sql;
    std::span<const std::vector<Named>> rows;
  };
  // `rows` cut into statements (statements_of_rows, by the conflict's key), each text made once;
  // `returning` makes them return their keys.
  std::vector<Batch> batches(std::span<const std::vector<Named>> rows, bool returning);
  // Runs the batches in order, each a transaction's statement (a database may send them together);
  // when `read`, returns the key of each row each batch wrote (as conflict_key), else nothing.
  virtual std::vector<std::vector<std::string>> run_batches(std::span<const Batch> batches, bool read) = 0;
  // The parameter numbered `index` (from 0) in a statement of many rows, as the database writes it.
  virtual std::string numbered_parameter(std::size_t index) const = 0;
  // A row's key as run_batches returns it: key_text of the conflict's key ("" for plain inserts).
  std::string conflict_key(SqlValues row) const;
  // Checks `row` against the columns of the first row, which it records.
  void check_columns(SqlValues row);

  const std::string table_;
  const std::optional<OnConflict> on_conflict_;
  std::vector<std::string_view> columns_;  // of the first row

 private:
  std::map<std::pair<std::size_t, bool>, std::string> batch_sql_;  // by rows and returning
};

// SQL written with `:name` parameters as PostgreSQL takes it: each `:name` becomes `$n`, n the
// position of that name in `values` (from 1). Quoted text and `::` casts are left as they are.
std::string numbered_parameters(std::string_view sql, SqlValues values);

// The statements the result tables' writes are made of, as each database runs them: the pull side's
// tables (result_pulled_tables.cpp) are written once over it. SQL is written with `:name` parameters.
class ResultStatements {
 public:
  using Row = std::vector<std::optional<std::string>>;  // each column as text, nothing for NULL
  virtual ~ResultStatements() = default;

  // The quoted result table `{prefix}<name>`, and a quoted source table of the contract.
  virtual std::string table(std::string_view name) const = 0;
  std::string result_table(SourceKind kind) const {
    return table(result_table_name(kind));
  }
  virtual std::string source_table(std::string_view name) const = 0;
  // SQL that holds where `column` holds an integer (SQLite keeps any value in any column).
  virtual std::string holds_integer(std::string_view column) const = 0;
  // Whether the source table `name` of the contract has `column` (an optional column, which a
  // merchant database made before it existed lacks).
  virtual bool source_has_column(std::string_view name, std::string_view column) = 0;

  // Runs `work` in one write transaction, failures as MerchantDatabaseError naming `task`.
  virtual void in_write_transaction(std::string_view task, const std::function<void()>& work) = 0;
  // Inside it: runs a statement, returns the rows it changed.
  virtual int run(const std::string& sql, SqlValues values) = 0;
  int run(const std::string& sql, std::initializer_list<Named> values) {
    return run(sql, SqlValues(values.begin(), values.size()));
  }
  // The same, for a statement whose count is not read (as RowUpsert::write_unread).
  virtual void run_unread(const std::string& sql, SqlValues values) { run(sql, values); }
  void run_unread(const std::string& sql, std::initializer_list<Named> values) {
    run_unread(sql, SqlValues(values.begin(), values.size()));
  }
  // The upsert of rows into `table` (quoted), to keep and write with inside write transactions.
  virtual std::unique_ptr<RowUpsert> upsert(std::string table, std::optional<OnConflict> on_conflict) = 0;
  // The rows of a query, in or out of a transaction.
  virtual std::vector<Row> query(std::string_view task, const std::string& sql, SqlValues values) = 0;
  std::vector<Row> query(std::string_view task, const std::string& sql, std::initializer_list<Named> values) {
    return query(task, sql, SqlValues(values.begin(), values.size()));
  }
};

}  // namespace fulfillsync::merchant
