#pragma once
// What the PostgreSQL faces (postgres_source_tables.cpp, ...) share: the one libpq connection, with
// its session settings; statements run with every value bound as a parameter, never spliced into the
// SQL; transactions that roll back when the work throws; and failures as MerchantDatabaseError
// carrying the server's message.
#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "fulfillsync/common/asio.hpp"
#include "fulfillsync/config/config.hpp"
#include "fulfillsync/merchant/database_error.hpp"
#include "fulfillsync/merchant/source_rows.hpp"
#include "sql_names.hpp"
#include "sql_values.hpp"

namespace fulfillsync::merchant {

// A parameter: text, or NULL. PostgreSQL casts it to the type the statement names ($1::bigint).
using PgParam = std::optional<std::string>;

// One statement's result.
class PgResult {
 public:
  explicit PgResult(PGresult* result) : result_(result, &PQclear) {}
  int rows() const { return PQntuples(result_.get()); }
  bool is_null(int row, int column) const { return PQgetisnull(result_.get(), row, column) != 0; }
  std::string text(int row, int column) const {
    return std::string(PQgetvalue(result_.get(), row, column),
                       static_cast<std::size_t>(PQgetlength(result_.get(), row, column)));
  }
  std::int64_t integer(int row, int column) const;
  // The value as the contract's rows keep it (source_rows.hpp): integers (and booleans, as 0 or 1)
  // as integers, floating point as reals, bytea as a blob, anything else as PostgreSQL's text for it.
  Field field(int row, int column) const;
  const PGresult* raw() const { return result_.get(); }
  // Rows an INSERT, UPDATE or DELETE changed.
  int changed() const { return std::atoi(PQcmdTuples(result_.get())); }
  // The value as text, nothing for NULL.
  std::optional<std::string> optional_text(int row, int column) const {
    if (is_null(row, column)) return std::nullopt;
    return text(row, column);
  }

 private:
  std::unique_ptr<PGresult, decltype(&PQclear)> result_;
};

// What libpq is handed to connect to merchant.postgresql (PQconnectdbParams, PQconnectStartParams):
// the connection string or its parts, with the password and TLS settings beside them.
class PgConnectionParams {
 public:
  // Reads the password file (throws MerchantDatabaseError when it cannot).
  explicit PgConnectionParams(const config::PostgresConfig& config);
  PgConnectionParams(const PgConnectionParams&) = delete;  // keywords() points into it
  PgConnectionParams& operator=(const PgConnectionParams&) = delete;

  const char* const* keywords() const { return keywords_.data(); }
  const char* const* values() const { return values_.data(); }
  // Whether the first value is a connection string for libpq to expand.
  int expand_dbname() const { return expand_dbname_; }
  // Which server, for an error: "host=... port=... dbname=... user=..." or "of merchant.postgresql.connection".
  const std::string& where() const { return where_; }

 private:
  std::vector<std::pair<const char*, std::string>> settings_;
  std::vector<const char*> keywords_, values_;
  int expand_dbname_ = 0;
  std::string where_;
};

// libpq's message for a failed connection, on one line.
std::string pg_error_message(const PGconn* connection);

// A text[] parameter holding `values` (for `= ANY($1::text[])`).
PgParam text_array(std::span<const std::string> values);

// The daemon's connection to the merchant database. Its failures are values of DatabaseFailure
// (database_error.hpp), each told to the observer:
// - A connection the server ended (a restart, a failover) is found before the next transaction starts
//   (the server's goodbye waits on the socket), so nothing runs on it: it is opened again at once.
// - A read that loses the connection midway (a statement outside a transaction, or a read_snapshot
//   transaction) is run once more on a reopened connection: the caller never sees that failure.
// - A write transaction that loses it is not: the server rolled it back (or, lost at COMMIT, may have
//   committed it), and the caller writes it again later; every write of the result tables is an
//   upsert that a second run leaves as the first did.
// - A connection that cannot be opened again is tried with a doubling back-off (250 ms to 30 s); until
//   then, statements fail at once as `unreachable`.
// - A write refused as read only (a replica after a failover, a server in recovery) drops the
//   connection, so that the next opens afresh: a name or a multi-host connection string
//   (target_session_attrs=read-write) may lead to the writable server by then.
// Every statement PREPARE takes (not BEGIN, COMMIT or EXPLAIN) runs as a server-side prepared
// statement: its text is prepared under a name the first time the session runs it (in the same round
// trip, in a pipeline) and then executed by name, so the server parses and plans it once a session
// (until a table grows: below), not at every run.
// The names belong to the session: a connection opened again prepares them anew. A prepared
// statement whose table changed a column's type fails its next run (the server will not change its
// result type), and so does every name after a DISCARD ALL or DEALLOCATE (a connection pooler's
// reset): that run fails as `other`, and the connection is opened afresh for the next.
// A prepared statement keeps the plan the server settles on after five runs, made for the tables as
// they were then: a key lookup planned on a table of a few hundred rows is a scan of the whole table,
// still after the table grew a thousandfold, until an ANALYZE (autovacuum's, or none when it is off).
// So when a table has changed by 1,000 rows the session wrote to it or read as changed in it
// (count_rows_changed), and again each time that count doubles, the session deallocates its
// statements before its next transaction: each is prepared and planned again against the tables as
// they are (the planner scales a table's statistics to its current size, so no ANALYZE is needed,
// nor the privilege to run it).
class PostgresConnection {
 public:
  // Texts prepared in one session at most; others run unnamed, so that texts that vary cannot grow
  // the server's memory without bound (the connectors' texts are a few dozen).
  static constexpr std::size_t kMostPrepared = 128;
  // Rows of a table a session changes or sees changed before its statements are planned again, the
  // first time; then each time that count doubles. A key lookup's plan turns from a scan of the
  // table to its index at a few hundred rows.
  static constexpr std::uint64_t kRowsBeforePlanningAgain = 1000;

  // Connects (merchant.postgresql) and sets the session up: statement_timeout, UTC, ISO dates, and
  // with `read_only` every transaction read only. Throws MerchantDatabaseError with libpq's message
  // when it cannot.
  explicit PostgresConnection(const config::MerchantConfig& config, bool read_only = false);
  ~PostgresConnection();
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  // "postgresql host=... port=... dbname=... user=...": never the password.
  const std::string& describe() const { return description_; }

  // Quoted, schema-qualified names: a source table (merchant.postgresql.source_schema) and a result
  // table `{prefix}<name>` (merchant.postgresql.result_schema).
  std::string source_table(std::string_view name) const;
  std::string result_table(std::string_view name) const;
  std::string result_table(SourceKind kind) const {
    return result_table(result_table_name(kind));
  }
  const std::string& source_schema() const { return source_schema_; }
  const std::string& prefix() const { return prefix_; }
  const std::string& result_schema() const { return result_schema_; }

  // Runs one statement, `$1`... bound to `params`. `task` says what it was for in the error. Outside
  // a transaction, a statement is a read (every write goes in in_transaction): one that loses the
  // connection is run once more on a reopened one.
  PgResult run(std::string_view task, const std::string& sql, std::span<const PgParam> params = {});
  PgResult run(std::string_view task, const std::string& sql, std::initializer_list<PgParam> params) {
    return run(task, sql, std::span<const PgParam>(params.begin(), params.size()));
  }

  // Whether the source table or view `table` has `column`: looked up once per session, so that a
  // read of rows with optional columns costs no round trip for them; a column added to a view is
  // seen once the connection is opened again (or the daemon started again).
  bool source_has_column(std::string_view table, std::string_view column);

  // Runs SQL text of several statements without parameters: the reference DDL, nothing with values.
  void run_script(std::string_view task, const std::string& sql);

  // A statement and its parameters, `task` saying what it was for in an error.
  struct Statement {
    std::string task;
    std::string sql;
    std::vector<PgParam> params;
  };

  // Runs `statements` in one write transaction of their own, in one round trip: BEGIN, the
  // statements and COMMIT go out together (libpq's pipeline mode), so a batch costs one wait on the
  // server, not one per statement. Returns the rows each statement changed. Fails as a transaction
  // does: the first error rolls the whole batch back (the connection stays usable, or is dropped and
  // opened again when it was lost); not inside in_transaction.
  std::vector<int> run_in_one_round_trip(std::vector<Statement> statements);

  // The same, awaited without holding up the caller's event loop: the statements go out at once and
  // the loop serves others (an order's HTTP send, its answer) while the server works, until libpq's
  // socket, watched by Asio as the change listener's is, has the answer. Fails as the blocking one
  // does. One such batch is under way at a time; another waits its turn. A blocking statement
  // meanwhile first waits for what the batch under way has left to come (as it would for a statement
  // of its own), so no one reads another's results.
  boost::asio::awaitable<std::vector<int>> run_in_one_round_trip_async(std::vector<Statement> statements);

  // Inside a write transaction: a statement whose result nobody reads. It waits, and goes out with the
  // next statement that is read (or COMMIT) in one round trip; its failure fails that statement, and
  // so the transaction.
  void run_later(std::string_view task, const std::string& sql, std::vector<PgParam> params);

  // Inside a write transaction: runs `statements` after those waiting (run_later), all in one round
  // trip, and returns their results. Fails as one statement does.
  std::vector<PgResult> run_together(std::vector<Statement> statements);

  // Rows written to `table` (the quoted name), or read as changed in it: see the class comment.
  void count_rows_changed(const std::string& table, std::size_t rows);

  // Round trips to the server so far (each statement, script or pipeline waited on): what the
  // batched writes save, for tests.
  std::uint64_t round_trips() const { return round_trips_; }

  enum class Transaction {
    read_snapshot,  // REPEATABLE READ READ ONLY: every statement sees one snapshot
    write,          // READ COMMITTED
  };
  // Runs `work` in one transaction: committed when it returns, rolled back when it throws. A
  // read_snapshot transaction that loses the connection runs once more, `work` with it.
  template <typename Work>
  auto in_transaction(std::string_view task, Transaction kind, Work work) -> decltype(work()) {
    if (kind == Transaction::read_snapshot && !in_transaction_) {
      return once_more_if_lost([&] { return transaction(task, kind, work); });
    }
    return transaction(task, kind, work);
  }

  // From now on, every failure and reopening is told to `observer` (which outlives the connection).
  void observe_failures(DatabaseFailureObserver& observer) { observer_ = &observer; }
  // The next statement opens a lost connection at once, whatever is left of the back-off.
  void reopen_without_delay() { next_open_at_ = {}; }

 private:
  template <typename Work>
  auto transaction(std::string_view task, Transaction kind, Work& work) -> decltype(work()) {
    begin(task, kind);
    try {
      if constexpr (std::is_void_v<decltype(work())>) {
        work();
        commit(task);
      } else {
        auto result = work();
        commit(task);
        return result;
      }
    } catch (...) {
      rollback();
      throw;
    }
  }

  // Runs `attempt` (a read), and once more when it lost the connection.
  template <typename Attempt>
  auto once_more_if_lost(Attempt attempt) -> decltype(attempt()) {
    try {
      return attempt();
    } catch (const MerchantDatabaseError& error) {
      if (error.failure() != DatabaseFailure::connection_lost) throw;
    }
    return attempt();
  }

  void connect();
  // Before a statement outside a transaction: opens the connection if it is gone or the server ended
  // it, and deallocates the session's statements if a table grew enough to plan them again.
  void open_if_lost(std::string_view task);
  void plan_again_if_grown(std::string_view task);
  // Closes a connection that was lost (or is to be opened afresh); the next statement opens it again.
  void drop(std::string_view task, std::string_view why);
  PgResult execute(std::string_view task, const std::string& sql, std::span<const PgParam> params);
  // Sends `statements` in one round trip (libpq's pipeline mode) and returns their results; throws
  // the first one's failure (the server skipped those after it).
  std::vector<PgResult> pipeline(std::span<const Statement> statements);
  // `statements` between BEGIN and COMMIT: run_in_one_round_trip's.
  static std::vector<Statement> one_transaction(std::vector<Statement> statements);
  // pipeline()'s halves: sending, and reading the results as they come (PipelineReading); what the
  // blocking and the awaited pipelines share.
  struct PipelineReading;
  void send_pipeline(std::span<const Statement> statements, PipelineReading& reading);
  bool read_next(PipelineReading& reading);  // takes one PQgetResult; false once all came
  // The name `sql` is executed by in the pipeline `reading` is for: its prepared statement's, prepared
  // first in that pipeline when the session has not yet (added to reading.prepares), or none
  // (unnamed: BEGIN, COMMIT, or kMostPrepared reached).
  struct PipelineName {
    std::string name;
    bool prepare_first = false;
  };
  PipelineName pipeline_name(const std::string& sql, std::size_t statement, PipelineReading& reading);
  // Whether `sql` is to be prepared, with `pending` prepares on their way besides those the session has.
  bool may_prepare(const std::string& sql, std::size_t pending) const;
  std::vector<PgResult> finish_pipeline(PipelineReading& reading);
  // The awaited pipeline under way, if any: read to its end (blocking) before the connection is used
  // otherwise, its results kept for its awaiter.
  void finish_awaited();
  struct Awaited;          // the state of the awaited pipelines (postgres_support.cpp)
  struct AwaitedPipeline;  // one under way
  // Its end, however it came: its results (or failure) kept for its awaiter, the socket let go.
  void complete(AwaitedPipeline& pipeline);
  void begin(std::string_view task, Transaction kind);
  void commit(std::string_view task);
  void rollback() noexcept;
  // An error as the connection reports and handles it.
  struct Failure {
    std::string message;  // one line, with the server's SQLSTATE when it gave one
    DatabaseFailure kind = DatabaseFailure::other;
    // The session's prepared statements no longer answer to their names (see fail()).
    bool names_lost = false;
  };
  // The failure of the server's error result `raw` (or of the connection, without one).
  Failure failure_of(const PGresult* raw) const;
  [[noreturn]] void fail(std::string_view task, Failure failure);
  [[noreturn]] void fail(std::string_view task, std::string_view message, DatabaseFailure kind) {
    fail(task, Failure{std::string(message), kind, false});
  }
  void tell(DatabaseFailure failure) {
    if (observer_ != nullptr) observer_->failed(failure);
  }

  config::PostgresConfig config_;
  PgConnectionParams params_;
  std::string prefix_;
  std::string source_schema_;
  std::string result_schema_;
  std::string description_;
  bool read_only_ = false;
  bool in_transaction_ = false;  // between begin() and commit() or rollback()
  PGconn* connection_ = nullptr;
  DatabaseFailureObserver* observer_ = nullptr;
  int open_failures_ = 0;   // tries to open it again that failed in a row
  std::chrono::steady_clock::time_point next_open_at_{};  // no try before (the back-off)
  std::string last_open_error_;
  std::string farewell_;  // the server's last FATAL message (why it ended the connection)
  std::uint64_t round_trips_ = 0;
  // source_has_column's answers this session, by "table.column".
  std::map<std::string, bool, std::less<>> source_columns_;
  std::vector<Statement> queued_;  // run_later's, in order
  // This session's prepared statements, by SQL text: only those whose prepare the server confirmed.
  std::unordered_map<std::string, std::string> prepared_;
  std::uint64_t names_given_ = 0;  // never one name twice, whether its prepare succeeded or not
  // Rows of each table this session changed or saw changed, and the count at which its statements
  // are planned again.
  struct Growth {
    std::uint64_t changed = 0;
    std::uint64_t plan_again_at = kRowsBeforePlanningAgain;
  };
  std::unordered_map<std::string, Growth> growth_;
  std::string grown_table_;  // the table that changed enough to plan again, until it is done
  std::shared_ptr<Awaited> awaited_;  // shared with the awaiting coroutines, which may outlive a turn
};

// Writes rows into one table (RowUpsert), with the SQL of SQLite's Upsert (sql_values.hpp: upsert_sql)
// and `$n` parameters. The first row fixes the columns; every later row names the same ones in the
// same order.
class PgUpsert final : public RowUpsert {
 public:
  using RowUpsert::write;

  PgUpsert(PostgresConnection& connection, std::string table, std::optional<OnConflict> on_conflict = std::nullopt);

  int write(SqlValues row) override;
  void write_unread(SqlValues row) override;
  // Writes every row in one transaction of its own and one round trip, as write_all's statements
  // (PostgresConnection::run_in_one_round_trip); not inside in_transaction.
  void write_in_one_round_trip(std::span<const std::vector<Named>> rows);
  // The same, awaited (PostgresConnection::run_in_one_round_trip_async).
  boost::asio::awaitable<void> write_in_one_round_trip_async(std::span<const std::vector<Named>> rows);

 private:
  // Inside a write transaction: the batches that are read in one round trip (run_together), the
  // others left to go with the next (run_later).
  std::vector<std::vector<std::string>> run_batches(std::span<const Batch> batches, bool read) override;
  std::string numbered_parameter(std::size_t index) const override { return fmt::format("${}", index + 1); }
  // The batches' statements, their rows counted as changed (PostgresConnection::count_rows_changed).
  std::vector<PostgresConnection::Statement> statements(std::span<const Batch> batches);

  PostgresConnection& connection_;
  std::string task_;  // "writing <table>", for an error
  std::string sql_;   // of one row
};

// SQLite's upsert SQL (sql_values.hpp: upsert_sql) with `$n` parameters.
std::string pg_upsert_sql(std::string_view table, SqlValues row, const std::optional<OnConflict>& on_conflict);

// A statement's values as parameters, in order.
std::vector<PgParam> parameters(SqlValues values);

}  // namespace fulfillsync::merchant
