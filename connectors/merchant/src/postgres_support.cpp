#include "postgres_support.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/asio/posix/stream_descriptor.hpp>

#include "fulfillsync/common/doubling.hpp"
#include "fulfillsync/common/invariant.hpp"

namespace fulfillsync::merchant {
namespace asio = boost::asio;

namespace {

// The type oids of pg_type the readers tell apart (catalog/pg_type_d.h, stable across versions).
constexpr Oid kBoolOid = 16, kByteaOid = 17, kInt8Oid = 20, kInt2Oid = 21, kInt4Oid = 23, kFloat4Oid = 700,
              kFloat8Oid = 701;

std::string trimmed(std::string_view message) {
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.remove_suffix(1);
  return std::string(message);
}

// The server's message (ERROR, then its CONTEXT, DETAIL, HINT lines) on one line, for one log line.
std::string one_line(std::string_view message) {
  std::string line;
  for (const char c : trimmed(message)) {
    if (c == '\n') {
      line += "; ";
    } else {
      line += c;
    }
  }
  return line;
}

// bytea's text output, "\x0a1b...", as its bytes.
std::string bytea_bytes(std::string_view hex) {
  std::string bytes;
  if (hex.substr(0, 2) != "\\x") return std::string(hex);
  for (std::size_t i = 2; i + 1 < hex.size(); i += 2) {
    unsigned value = 0;
    std::from_chars(hex.data() + i, hex.data() + i + 2, value, 16);
    bytes += static_cast<char>(value);
  }
  return bytes;
}

// The password on the file's first line (the configuration checked the file).
std::string read_password(const std::filesystem::path& file) {
  if (file.empty()) return {};
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  if (!in && !in.eof()) throw MerchantDatabaseError(fmt::format("cannot read {}", file.string()));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  return line;
}

}  // namespace

std::int64_t PgResult::integer(int row, int column) const {
  const char* text = PQgetvalue(result_.get(), row, column);
  std::int64_t value = 0;
  std::from_chars(text, text + PQgetlength(result_.get(), row, column), value);
  return value;
}

Field PgResult::field(int row, int column) const {
  if (is_null(row, column)) return Field{};
  switch (PQftype(result_.get(), column)) {
    case kInt2Oid:
    case kInt4Oid:
    case kInt8Oid: return Field::of(integer(row, column));
    case kBoolOid: return Field::of(std::int64_t{text(row, column) == "t"});
    case kFloat4Oid:
    case kFloat8Oid: return Field{.type = Field::Type::real, .real = std::strtod(PQgetvalue(result_.get(), row, column), nullptr)};
    case kByteaOid: return Field{.type = Field::Type::blob, .text = bytea_bytes(text(row, column))};
    default: return Field::of(text(row, column));
  }
}

PgParam text_array(std::span<const std::string> values) {
  std::string array = "{";
  for (const std::string& value : values) {
    if (array.size() > 1) array += ',';
    array += '"';
    for (char c : value) {
      if (c == '"' || c == '\\') array += '\\';
      array += c;
    }
    array += '"';
  }
  return array + "}";
}

PgConnectionParams::PgConnectionParams(const config::PostgresConfig& config)
    : expand_dbname_(config.connection.empty() ? 0 : 1),
      where_(config.connection.empty() ? fmt::format("host={} port={} dbname={} user={}", config.host, config.port,
                                                     config.database, config.user)
                                       : std::string("of merchant.postgresql.connection")) {
  // Keywords are taken in order, a later one overriding: the connection string comes first, so what
  // the configuration sets beside it (the password, sslmode) wins. Keepalives first, so that the
  // connection string can set its own: a peer gone without a word (a network cut) is found within
  // about two minutes rather than never, which matters to the change listener's idle connection.
  settings_.emplace_back("keepalives_idle", "60");
  settings_.emplace_back("keepalives_interval", "10");
  settings_.emplace_back("keepalives_count", "6");
  if (!config.connection.empty()) {
    settings_.emplace_back("dbname", config.connection);
  } else {
    settings_.emplace_back("host", config.host);
    settings_.emplace_back("port", std::to_string(config.port));
    settings_.emplace_back("dbname", config.database);
    settings_.emplace_back("user", config.user);
  }
  if (std::string password = read_password(config.password_file); !password.empty()) {
    settings_.emplace_back("password", std::move(password));
  }
  if (!config.sslmode.empty()) settings_.emplace_back("sslmode", config.sslmode);
  if (!config.sslrootcert.empty()) settings_.emplace_back("sslrootcert", config.sslrootcert.string());
  settings_.emplace_back("fallback_application_name", "fulfillsyncd");
  for (const auto& [keyword, value] : settings_) {
    keywords_.push_back(keyword);
    values_.push_back(value.c_str());
  }
  keywords_.push_back(nullptr);
  values_.push_back(nullptr);
}

std::string pg_error_message(const PGconn* connection) {
  return connection != nullptr ? one_line(PQerrorMessage(connection)) : "out of memory";
}

// One awaited pipeline: its statements, its results as they come, and its end.
struct PostgresConnection::AwaitedPipeline {
  std::vector<Statement> statements;
  std::unique_ptr<PipelineReading> reading;
  bool done = false;
  std::vector<PgResult> results;
  std::exception_ptr failure;
};

// What the awaited pipelines share with the connection and their awaiters: whose turn it is, the
// pipeline under way and libpq's socket as Asio watches it while one is.
struct PostgresConnection::Awaited {
  bool turn_taken = false;
  // Exists while some wait for a turn; dropped when one ends, which wakes them to look again. So
  // nothing here is bound to the event loop between turns, and the connection may outlive it.
  std::optional<asio::steady_timer> turn_released;
  std::shared_ptr<AwaitedPipeline> under_way;
  std::optional<asio::posix::stream_descriptor> socket;  // libpq's, lent while one is under way

  // libpq keeps its socket: Asio lets it go (and ends the waits on it).
  void stop_watching() {
    if (socket) socket->release();
    socket.reset();
  }
};

struct PostgresConnection::PipelineReading {
  std::span<const Statement> statements;
  // The prepares sent in the pipeline, each just before statement `before` (an index of statements):
  // their results come before that statement's.
  struct Prepare {
    std::size_t before;
    std::string sql;
    std::string name;
  };
  std::vector<Prepare> prepares{};
  std::size_t prepares_read = 0;
  std::vector<PgResult> results{};
  std::optional<std::pair<std::size_t, Failure>> error{};  // the first: which statement, and why
  bool synced = false;
  int nulls_in_a_row = 0;
};

PostgresConnection::PostgresConnection(const config::MerchantConfig& config, bool read_only)
    : config_(config.postgresql),
      params_(config.postgresql),
      prefix_(config.result_table_prefix),
      source_schema_(config.postgresql.source_schema),
      result_schema_(config.postgresql.result_schema),
      read_only_(read_only) {
  for (const std::string* name : {&prefix_, &source_schema_, &result_schema_}) {
    if (!is_plain_identifier(*name)) {
      throw MerchantDatabaseError(fmt::format("'{}' is not a plain SQL identifier", *name));
    }
  }
  connect();
}

PostgresConnection::~PostgresConnection() {
  if (awaited_) awaited_->stop_watching();  // before libpq closes the socket
  if (connection_ != nullptr) PQfinish(connection_);
}

void PostgresConnection::connect() {
  if (connection_ != nullptr) PQfinish(connection_);
  farewell_.clear();
  source_columns_.clear();
  prepared_.clear();  // the new session has none of them, and plans each as the tables are now
  growth_.clear();
  grown_table_.clear();
  connection_ = PQconnectdbParams(params_.keywords(), params_.values(), params_.expand_dbname());
  if (connection_ == nullptr || PQstatus(connection_) != CONNECTION_OK) {
    const std::string message = pg_error_message(connection_);
    if (connection_ != nullptr) PQfinish(connection_);
    connection_ = nullptr;
    throw MerchantDatabaseError(
        fmt::format("merchant database postgresql {}: cannot connect: {}", params_.where(), message),
        DatabaseFailure::unreachable);
  }
  // The server's notices (an idempotent step's "already exists, skipping") are not the daemon's
  // output; a FATAL one is why the server is about to end the connection (a shutdown), kept for the log.
  PQsetNoticeProcessor(
      connection_,
      [](void* self, const char* message) {
        if (std::string_view(message).starts_with("FATAL")) {
          static_cast<PostgresConnection*>(self)->farewell_ = one_line(message);
        }
      },
      this);
  description_ = fmt::format("postgresql host={} port={} dbname={} user={}", PQhost(connection_), PQport(connection_),
                             PQdb(connection_), PQuser(connection_));
  // Times come back in UTC and ISO form, whatever the server's defaults; no statement waits on a lock
  // longer than statement_timeout. A read_write session keeps the server's default_transaction_read_only:
  // a server set read only refuses the daemon's writes too, as a replica would.
  std::string setup =
      "SELECT set_config('statement_timeout', $1, false), set_config('TimeZone', 'UTC', false), "
      "set_config('DateStyle', 'ISO, YMD', false)";
  if (read_only_) setup += ", set_config('default_transaction_read_only', 'on', false)";
  const PgParam timeout[] = {std::to_string(config_.statement_timeout.count())};
  execute("setting up the session", setup, timeout);
}

std::string PostgresConnection::source_table(std::string_view name) const {
  return fmt::format("{}.{}", sql_name(source_schema_), sql_name(name));
}

std::string PostgresConnection::result_table(std::string_view name) const {
  return fmt::format("{}.{}", sql_name(result_schema_), sql_name(prefix_ + std::string(name)));
}

namespace {

// Reopening a connection that was lost: 250 ms, doubling to 30 s (as the change listener).
constexpr Doubling kReopen{std::chrono::milliseconds(250), std::chrono::seconds(30)};

// The failure an error is, by the connection's state and the error's SQLSTATE.
DatabaseFailure classify(const PGconn* connection, const char* sqlstate) {
  if (connection == nullptr || PQstatus(connection) == CONNECTION_BAD) return DatabaseFailure::connection_lost;
  const std::string_view state = sqlstate != nullptr ? sqlstate : "";
  // Class 08 (connection exception); admin_shutdown, crash_shutdown, cannot_connect_now.
  if (state.starts_with("08") || state == "57P01" || state == "57P02" || state == "57P03") {
    return DatabaseFailure::connection_lost;
  }
  if (state == "57014") return DatabaseFailure::statement_timeout;  // query_canceled
  if (state == "25006") return DatabaseFailure::read_only;          // read_only_sql_transaction
  if (state == "42501") return DatabaseFailure::permission_denied;  // insufficient_privilege
  return DatabaseFailure::other;
}

}  // namespace

PgResult PostgresConnection::run(std::string_view task, const std::string& sql, std::span<const PgParam> params) {
  if (in_transaction_) return execute(task, sql, params);
  return once_more_if_lost([&] { return execute(task, sql, params); });
}

PgResult PostgresConnection::execute(std::string_view task, const std::string& sql, std::span<const PgParam> params) {
  finish_awaited();
  if (!in_transaction_) {
    open_if_lost(task);
  } else if (connection_ == nullptr) {
    // The transaction died with its connection: its statements must not go on, committed one by one
    // on a new connection.
    fail(task, "the connection was lost inside the transaction", DatabaseFailure::connection_lost);
  }
  const auto prepared = prepared_.find(sql);
  if (!queued_.empty() || (prepared == prepared_.end() && may_prepare(sql, 0))) {
    // The statements waiting go out with this one, in one round trip; so does its prepare, the first
    // time the session runs it.
    std::vector<Statement> statements = std::exchange(queued_, {});
    statements.push_back({std::string(task), sql, std::vector<PgParam>(params.begin(), params.end())});
    return std::move(pipeline(statements).back());
  }
  std::vector<const char*> values;
  for (const PgParam& param : params) values.push_back(param ? param->c_str() : nullptr);
  const int count = static_cast<int>(values.size());
  ++round_trips_;
  PgResult result(prepared != prepared_.end()
                      ? PQexecPrepared(connection_, prepared->second.c_str(), count, values.data(), nullptr, nullptr, 0)
                      : PQexecParams(connection_, sql.c_str(), count, nullptr, values.data(), nullptr, nullptr, 0));
  const PGresult* raw = result.raw();
  const ExecStatusType status = PQresultStatus(raw);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) fail(task, failure_of(raw));
  return result;
}

PostgresConnection::Failure PostgresConnection::failure_of(const PGresult* raw) const {
  const char* sqlstate = raw != nullptr ? PQresultErrorField(raw, PG_DIAG_SQLSTATE) : nullptr;
  const std::string message = one_line(raw != nullptr ? PQresultErrorMessage(raw) : PQerrorMessage(connection_));
  if (sqlstate == nullptr) return {message, classify(connection_, nullptr), false};
  const std::string_view state = sqlstate;
  // A stale plan ("cached plan must not change result type") or a name the server forgot ("prepared
  // statement does not exist").
  return {fmt::format("{} (SQLSTATE {})", message, state), classify(connection_, sqlstate),
          state == "0A000" || state == "26000"};
}

void PostgresConnection::open_if_lost(std::string_view task) {
  finish_awaited();
  if (connection_ != nullptr) {
    // A server that ended the connection (a restart's shutdown, pg_terminate_backend) has said so on
    // the socket: read it now rather than learn it from a failed statement. Never blocks (libpq's
    // socket is non-blocking), and reads nothing else: no statement is running.
    if (PQconsumeInput(connection_) != 0 && PQstatus(connection_) == CONNECTION_OK) {
      plan_again_if_grown(task);
      return;
    }
    tell(DatabaseFailure::connection_lost);
    drop(task, farewell_.empty() ? pg_error_message(connection_) : farewell_);
  }
  const auto now = std::chrono::steady_clock::now();
  if (open_failures_ > 0 && now < next_open_at_) {
    throw MerchantDatabaseError(
        fmt::format("merchant database {}: {}: not connected ({}); trying again in {} ms", description_, task,
                    last_open_error_, std::chrono::ceil<std::chrono::milliseconds>(next_open_at_ - now).count()),
        DatabaseFailure::unreachable);
  }
  try {
    connect();
  } catch (const MerchantDatabaseError& error) {
    ++open_failures_;
    next_open_at_ = now + kReopen.after(open_failures_);
    last_open_error_ = error.what();
    tell(DatabaseFailure::unreachable);
    // Once per loss, not per try: the tries go on at debug. Whether another use comes is the caller's
    // to say (a job's next run does; a start that fails ends the process), so this promises none.
    if (open_failures_ == 1) {
      spdlog::warn("{}; the next use of the connection opens it again, {} ms from now at the earliest (the wait "
                   "doubling after each failure, up to {} s)",
                   error.what(), kReopen.first.count(),
                   std::chrono::duration_cast<std::chrono::seconds>(kReopen.longest).count());
    } else {
      spdlog::debug("{}; the next try is {} ms from now at the earliest", error.what(),
                    kReopen.after(open_failures_).count());
    }
    throw MerchantDatabaseError(error.what(), DatabaseFailure::unreachable);
  }
  spdlog::info("merchant database {}: connection opened again{}", description_,
               open_failures_ > 0 ? fmt::format(" after {} failed tries", open_failures_) : std::string());
  open_failures_ = 0;
  if (observer_ != nullptr) observer_->reopened();
}

void PostgresConnection::count_rows_changed(const std::string& table, std::size_t rows) {
  Growth& growth = growth_[table];
  growth.changed += rows;
  if (growth.changed < growth.plan_again_at) return;
  growth.plan_again_at = 2 * growth.changed;
  grown_table_ = table;
}

void PostgresConnection::plan_again_if_grown(std::string_view task) {
  if (grown_table_.empty()) return;
  spdlog::debug("merchant database {}: {} rows of {} changed this session: its statements are planned again",
                description_, growth_[grown_table_].changed, grown_table_);
  grown_table_.clear();
  ++round_trips_;
  const PgResult result(PQexec(connection_, "DEALLOCATE ALL"));
  if (PQresultStatus(result.raw()) != PGRES_COMMAND_OK) fail(task, failure_of(result.raw()));
  prepared_.clear();
}

void PostgresConnection::drop(std::string_view task, std::string_view why) {
  spdlog::warn("merchant database {}: the connection was lost ({}) when {}; opening it again", description_,
               why.empty() ? "closed" : why, task);
  if (connection_ != nullptr) PQfinish(connection_);
  connection_ = nullptr;
}

bool PostgresConnection::source_has_column(std::string_view table, std::string_view column) {
  const std::string key = fmt::format("{}.{}", table, column);
  if (const auto known = source_columns_.find(key); known != source_columns_.end()) return known->second;
  const PgResult found =
      run(fmt::format("looking for {}", key),
          "SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = $2 AND attnum > 0 "
          "AND NOT attisdropped",
          {source_table(table), std::string(column)});
  const bool has = found.text(0, 0) != "0";
  source_columns_.emplace(key, has);
  return has;
}

void PostgresConnection::run_script(std::string_view task, const std::string& sql) {
  finish_awaited();
  if (!in_transaction_) open_if_lost(task);
  if (connection_ == nullptr) {
    fail(task, "the connection was lost inside the transaction", DatabaseFailure::connection_lost);
  }
  ++round_trips_;
  PgResult result(PQexec(connection_, sql.c_str()));
  const ExecStatusType status = PQresultStatus(result.raw());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) fail(task, failure_of(result.raw()));
}

void PostgresConnection::begin(std::string_view task, Transaction kind) {
  // Not yet in the transaction: a connection found lost is opened again, and BEGIN lost on the way is
  // sent again.
  run(task, kind == Transaction::read_snapshot ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN");
  in_transaction_ = true;
}

void PostgresConnection::commit(std::string_view task) {
  try {
    run(task, "COMMIT");
  } catch (const MerchantDatabaseError& error) {
    if (error.failure() != DatabaseFailure::connection_lost) throw;
    throw MerchantDatabaseError(fmt::format("{}; whether the transaction committed is unknown: it is written again, "
                                            "which changes nothing if it did",
                                            error.what()),
                                DatabaseFailure::connection_lost);
  }
  in_transaction_ = false;
}

void PostgresConnection::rollback() noexcept {
  finish_awaited();
  in_transaction_ = false;
  queued_.clear();
  // Nothing to roll back on a broken connection: the server ended the transaction with it.
  if (connection_ == nullptr || PQstatus(connection_) != CONNECTION_OK) return;
  ++round_trips_;
  PQclear(PQexec(connection_, "ROLLBACK"));
}

std::vector<PostgresConnection::Statement> PostgresConnection::one_transaction(std::vector<Statement> statements) {
  FULFILLSYNC_INVARIANT(!statements.empty(), "a transaction in one round trip has statements");
  const std::string task = statements.front().task;
  statements.insert(statements.begin(), Statement{task, "BEGIN", {}});
  statements.push_back({task, "COMMIT", {}});
  return statements;
}

namespace {

// Waits until libpq's socket can be read or written, whichever comes first (or the socket is let go).
// `socket` may be let go meanwhile (a blocking statement finished the pipeline).
asio::awaitable<void> until_ready(std::optional<asio::posix::stream_descriptor>& socket) {
  asio::steady_timer both_done(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
  int waiting = 2;
  const auto on_ready = [&](const boost::system::error_code&) {
    if (waiting == 2 && socket) socket->cancel();  // the first: the other wait ends too
    if (--waiting == 0) both_done.cancel();
  };
  socket->async_wait(asio::posix::stream_descriptor::wait_read, on_ready);
  socket->async_wait(asio::posix::stream_descriptor::wait_write, on_ready);
  boost::system::error_code ignored;
  co_await both_done.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
}

// The rows each of a transaction's statements changed (BEGIN's and COMMIT's left out).
std::vector<int> changed_between(const std::vector<PgResult>& results) {
  std::vector<int> changed;
  for (std::size_t i = 1; i + 1 < results.size(); ++i) changed.push_back(results[i].changed());
  return changed;
}

}  // namespace

std::vector<int> PostgresConnection::run_in_one_round_trip(std::vector<Statement> statements) {
  FULFILLSYNC_INVARIANT(!in_transaction_, "a batch in one round trip is its own transaction");
  if (statements.empty()) return {};
  open_if_lost(statements.front().task);
  try {
    return changed_between(pipeline(one_transaction(std::move(statements))));
  } catch (...) {
    rollback();  // a failed transaction waits for it
    throw;
  }
}

asio::awaitable<std::vector<int>> PostgresConnection::run_in_one_round_trip_async(std::vector<Statement> statements) {
  FULFILLSYNC_INVARIANT(!in_transaction_, "a batch in one round trip is its own transaction");
  if (statements.empty()) co_return std::vector<int>{};
  if (!awaited_) awaited_ = std::make_shared<Awaited>();
  const std::shared_ptr<Awaited> awaited = awaited_;
  const auto executor = co_await asio::this_coro::executor;
  while (awaited->turn_taken) {
    if (!awaited->turn_released) awaited->turn_released.emplace(executor, asio::steady_timer::time_point::max());
    boost::system::error_code ignored;
    co_await awaited->turn_released->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  awaited->turn_taken = true;
  struct EndOfTurn {
    Awaited& awaited;
    ~EndOfTurn() {
      awaited.turn_taken = false;
      awaited.turn_released.reset();
    }
  } end_of_turn{*awaited};

  const auto pipeline = std::make_shared<AwaitedPipeline>();
  try {
    open_if_lost(statements.front().task);
    pipeline->statements = one_transaction(std::move(statements));
    pipeline->reading = std::make_unique<PipelineReading>();
    // Queued without waiting for the socket to take it all: a batch of hundreds of statements is
    // more than it holds, and the server takes the rest only as fast as it executes them.
    PQsetnonblocking(connection_, 1);
    send_pipeline(pipeline->statements, *pipeline->reading);
    awaited->under_way = pipeline;
    awaited->socket.emplace(executor, PQsocket(connection_));
  } catch (...) {
    if (connection_ != nullptr) PQsetnonblocking(connection_, 0);
    pipeline->failure = std::current_exception();
    pipeline->done = true;
    rollback();  // whatever of it went out
  }
  // Sends the rest as the socket takes it, reading the answers that come meanwhile (so that the
  // server, were it to wait on sending them, goes on). A lost connection ends it: PQgetResult below
  // says so without waiting.
  while (!pipeline->done && PQflush(connection_) == 1) {
    co_await until_ready(awaited->socket);
    if (!pipeline->done) PQconsumeInput(connection_);
  }
  // Reads each result once libpq has all of it, the loop free meanwhile. A blocking statement that
  // comes in between reads the rest itself (finish_awaited), and ends the wait.
  while (!pipeline->done) {
    if (PQisBusy(connection_) == 1) {
      boost::system::error_code ignored;
      co_await awaited->socket->async_wait(asio::posix::stream_descriptor::wait_read,
                                           asio::redirect_error(asio::use_awaitable, ignored));
      if (pipeline->done) break;
      // A lost connection fails to read here; PQgetResult then says so without waiting.
      if (PQconsumeInput(connection_) == 1 && PQisBusy(connection_) == 1) continue;
    }
    if (!read_next(*pipeline->reading)) complete(*pipeline);
  }
  if (pipeline->failure) std::rethrow_exception(pipeline->failure);  // rolled back as it ended
  co_return changed_between(pipeline->results);
}

void PostgresConnection::finish_awaited() {
  if (!awaited_ || !awaited_->under_way) return;
  const std::shared_ptr<AwaitedPipeline> pipeline = awaited_->under_way;
  awaited_->stop_watching();  // wakes its awaiter, which finds it done
  // PQgetResult sends what is left to send, waiting as a blocking statement does.
  while (read_next(*pipeline->reading)) {
  }
  complete(*pipeline);
}

void PostgresConnection::complete(AwaitedPipeline& pipeline) {
  awaited_->stop_watching();
  awaited_->under_way.reset();
  if (connection_ != nullptr) PQsetnonblocking(connection_, 0);  // all sent: the sync's answer came
  try {
    pipeline.results = finish_pipeline(*pipeline.reading);
  } catch (...) {
    pipeline.failure = std::current_exception();
    // A statement that failed left its transaction open and aborted (the pipeline skipped the
    // COMMIT): ended now, so that a blocking statement coming before the awaiter resumes does not
    // run in it. (No blocking transaction is open here: begin() reads a batch under way first.)
    rollback();
  }
  pipeline.done = true;
}

void PostgresConnection::run_later(std::string_view task, const std::string& sql, std::vector<PgParam> params) {
  FULFILLSYNC_INVARIANT(in_transaction_, "only a transaction's statements wait for the next one");
  queued_.push_back({std::string(task), sql, std::move(params)});
}

std::vector<PgResult> PostgresConnection::run_together(std::vector<Statement> statements) {
  FULFILLSYNC_INVARIANT(in_transaction_, "run_together writes inside a transaction");
  if (statements.empty()) return {};
  std::vector<Statement> all = std::exchange(queued_, {});
  const std::size_t first = all.size();
  all.insert(all.end(), std::make_move_iterator(statements.begin()), std::make_move_iterator(statements.end()));
  std::vector<PgResult> results = pipeline(all);
  results.erase(results.begin(), results.begin() + static_cast<std::ptrdiff_t>(first));
  return results;
}

std::vector<PgResult> PostgresConnection::pipeline(std::span<const Statement> statements) {
  finish_awaited();
  PipelineReading reading;
  send_pipeline(statements, reading);
  while (read_next(reading)) {
  }
  return finish_pipeline(reading);
}

bool PostgresConnection::may_prepare(const std::string& sql, std::size_t pending) const {
  // What PREPARE takes; the rest (BEGIN, COMMIT, EXPLAIN) runs unnamed.
  constexpr std::string_view kPreparable[] = {"SELECT ", "INSERT ", "UPDATE ", "DELETE ", "WITH ", "VALUES "};
  const bool preparable = std::ranges::any_of(kPreparable, [&](std::string_view start) { return sql.starts_with(start); });
  return preparable && prepared_.size() + pending < kMostPrepared;
}

PostgresConnection::PipelineName PostgresConnection::pipeline_name(const std::string& sql, std::size_t statement,
                                                                   PipelineReading& reading) {
  if (const auto known = prepared_.find(sql); known != prepared_.end()) return {.name = known->second, .prepare_first = false};
  // A pipeline holds a few texts, each many times.
  for (const PipelineReading::Prepare& prepare : reading.prepares) {
    if (prepare.sql == sql) return {.name = prepare.name, .prepare_first = false};
  }
  if (!may_prepare(sql, reading.prepares.size())) return {};
  reading.prepares.push_back({.before = statement, .sql = sql, .name = fmt::format("fulfillsync_{}", ++names_given_)});
  return {.name = reading.prepares.back().name, .prepare_first = true};
}

void PostgresConnection::send_pipeline(std::span<const Statement> statements, PipelineReading& reading) {
  const std::string_view last_task = statements.back().task;
  if (connection_ == nullptr) fail(last_task, "the connection was lost inside the transaction", DatabaseFailure::connection_lost);
  reading.statements = statements;
  ++round_trips_;
  bool sent = PQenterPipelineMode(connection_) == 1;
  for (std::size_t i = 0; i < statements.size() && sent; ++i) {
    const Statement& statement = statements[i];
    std::vector<const char*> values;
    for (const PgParam& param : statement.params) values.push_back(param ? param->c_str() : nullptr);
    const int count = static_cast<int>(values.size());
    const PipelineName named = pipeline_name(statement.sql, i, reading);
    if (named.prepare_first) {
      sent = PQsendPrepare(connection_, named.name.c_str(), statement.sql.c_str(), 0, nullptr) == 1;
    }
    sent = sent && (named.name.empty() ? PQsendQueryParams(connection_, statement.sql.c_str(), count, nullptr,
                                                           values.data(), nullptr, nullptr, 0)
                                       : PQsendQueryPrepared(connection_, named.name.c_str(), count, values.data(),
                                                             nullptr, nullptr, 0)) == 1;
  }
  sent = sent && PQpipelineSync(connection_) == 1;
  // Only a broken connection refuses to queue: its state is unknown, so it is opened afresh.
  if (!sent) fail(last_task, pg_error_message(connection_), DatabaseFailure::connection_lost);
}

// One result per statement, each followed by a null, then the sync's. After an error the server
// skips the rest (PGRES_PIPELINE_ABORTED) up to the sync.
bool PostgresConnection::read_next(PipelineReading& reading) {
  PGresult* raw = PQgetResult(connection_);
  if (raw == nullptr) {
    // Two in a row: nothing more will come (a lost connection ends the pipeline so).
    return ++reading.nulls_in_a_row <= 1 && PQstatus(connection_) != CONNECTION_BAD;
  }
  reading.nulls_in_a_row = 0;
  PgResult result(raw);
  const ExecStatusType status = PQresultStatus(raw);
  if (status == PGRES_PIPELINE_SYNC) {
    reading.synced = true;
    return false;
  }
  // A prepare's failure is its statement's (the next result's).
  if (status == PGRES_FATAL_ERROR && !reading.error) reading.error.emplace(reading.results.size(), failure_of(raw));
  if (reading.prepares_read < reading.prepares.size() &&
      reading.prepares[reading.prepares_read].before == reading.results.size()) {
    // A prepare's result. Only one the server made is named again: one skipped after an earlier
    // error (PGRES_PIPELINE_ABORTED), or failed, is prepared anew the next time.
    PipelineReading::Prepare& prepare = reading.prepares[reading.prepares_read++];
    if (status == PGRES_COMMAND_OK) prepared_.emplace(std::move(prepare.sql), std::move(prepare.name));
    return true;
  }
  reading.results.push_back(std::move(result));
  return true;
}

std::vector<PgResult> PostgresConnection::finish_pipeline(PipelineReading& reading) {
  std::span<const Statement> statements = reading.statements;
  auto& error = reading.error;
  if (!reading.synced || PQexitPipelineMode(connection_) != 1) {
    if (!error) error.emplace(reading.results.size(), Failure{pg_error_message(connection_), {}, false});
    error->second.kind = DatabaseFailure::connection_lost;
  }
  if (!error) return std::move(reading.results);
  const std::size_t at = std::min(error->first, statements.size() - 1);
  const Statement& failed = statements[at];
  Failure& failure = error->second;
  // (commit() says so for a transaction of in_transaction.)
  if (failure.kind == DatabaseFailure::connection_lost && failed.sql == "COMMIT" && !in_transaction_) {
    failure.message += "; whether the transaction committed is unknown: it is written again, which changes "
                       "nothing if it did";
  }
  fail(failed.task, std::move(failure));
}

std::string pg_upsert_sql(std::string_view table, SqlValues row, const std::optional<OnConflict>& on_conflict) {
  return upsert_sql(table, row, on_conflict, [](std::size_t index, std::string_view) { return fmt::format("${}", index + 1); });
}

PgUpsert::PgUpsert(PostgresConnection& connection, std::string table, std::optional<OnConflict> on_conflict)
    : RowUpsert(std::move(table), std::move(on_conflict)),
      connection_(connection),
      task_(fmt::format("writing {}", table_)) {}

int PgUpsert::write(SqlValues row) {
  check_columns(row);
  if (sql_.empty()) sql_ = pg_upsert_sql(table_, row, on_conflict_);
  connection_.count_rows_changed(table_, 1);
  return connection_.run(task_, sql_, parameters(row)).changed();
}

void PgUpsert::write_unread(SqlValues row) {
  check_columns(row);
  if (sql_.empty()) sql_ = pg_upsert_sql(table_, row, on_conflict_);
  connection_.count_rows_changed(table_, 1);
  connection_.run_later(task_, sql_, parameters(row));
}

std::vector<PostgresConnection::Statement> PgUpsert::statements(std::span<const Batch> batches) {
  std::vector<PostgresConnection::Statement> made;
  made.reserve(batches.size());
  for (const Batch& batch : batches) {
    connection_.count_rows_changed(table_, batch.rows.size());
    PostgresConnection::Statement& statement = made.emplace_back(PostgresConnection::Statement{task_, *batch.sql, {}});
    statement.params.reserve(batch.rows.size() * columns_.size());
    for (const std::vector<Named>& row : batch.rows) {
      for (const Named& named : row) statement.params.push_back(named.value.text());
    }
  }
  return made;
}

std::vector<std::vector<std::string>> PgUpsert::run_batches(std::span<const Batch> batches, bool read) {
  std::vector<PostgresConnection::Statement> made = statements(batches);
  if (!read) {
    for (PostgresConnection::Statement& statement : made) {
      connection_.run_later(statement.task, statement.sql, std::move(statement.params));
    }
    return {};
  }
  std::vector<std::vector<std::string>> written;
  for (const PgResult& result : connection_.run_together(std::move(made))) {
    // The keys it returned, a row each.
    std::vector<std::string>& keys = written.emplace_back();
    for (int r = 0; r < result.rows(); ++r) {
      std::string& key = keys.emplace_back();
      for (int c = 0; c < PQnfields(result.raw()); ++c) {
        if (c > 0) key += kKeySeparator;
        key += result.text(r, c);
      }
    }
  }
  return written;
}

asio::awaitable<void> PgUpsert::write_in_one_round_trip_async(std::span<const std::vector<Named>> rows) {
  if (rows.empty()) co_return;
  std::vector<PostgresConnection::Statement> made = statements(batches(rows, false));
  co_await connection_.run_in_one_round_trip_async(std::move(made));
}

void PgUpsert::write_in_one_round_trip(std::span<const std::vector<Named>> rows) {
  if (rows.empty()) return;
  connection_.run_in_one_round_trip(statements(batches(rows, false)));
}

std::vector<PgParam> parameters(SqlValues values) {
  std::vector<PgParam> params;
  for (const Named& named : values) params.push_back(named.value.text());
  return params;
}

void PostgresConnection::fail(std::string_view task, Failure failure) {
  tell(failure.kind);
  const std::string what = fmt::format("merchant database {}: {}: {}", description_, task, failure.message);
  // When the session's prepared statements no longer answer to their names: one whose table changed
  // a column's type fails so at every run (SQLSTATE 0A000), and all are gone after a DISCARD ALL or
  // DEALLOCATE, which a connection pooler may run (26000). Opened afresh, the session prepares them anew.
  if (failure.kind == DatabaseFailure::connection_lost && connection_ != nullptr) {
    drop(task, farewell_.empty() ? failure.message : farewell_);
  } else if ((failure.kind == DatabaseFailure::read_only && !read_only_) || failure.names_lost) {
    // Opened afresh for the next statement (after a refused write, it may reach the writable server:
    // see the header).
    PQfinish(connection_);
    connection_ = nullptr;
  }
  throw MerchantDatabaseError(what, failure.kind);
}

}  // namespace fulfillsync::merchant
