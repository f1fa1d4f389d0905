#include "postgres_support.hpp"

#include <charconv>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

namespace fulfillsync::merchant {
namespace {

// The type oids of pg_type the readers tell apart (catalog/pg_type_d.h, stable across versions).
constexpr Oid kBoolOid = 16, kByteaOid = 17, kInt8Oid = 20, kInt2Oid = 21, kInt4Oid = 23, kFloat4Oid = 700,
              kFloat8Oid = 701;

std::string trimmed(std::string_view message) {
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.remove_suffix(1);
  return std::string(message);
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
  return connection != nullptr ? trimmed(PQerrorMessage(connection)) : "out of memory";
}

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
  if (connection_ != nullptr) PQfinish(connection_);
}

void PostgresConnection::connect() {
  if (connection_ != nullptr) PQfinish(connection_);
  connection_ = PQconnectdbParams(params_.keywords(), params_.values(), params_.expand_dbname());
  if (connection_ == nullptr || PQstatus(connection_) != CONNECTION_OK) {
    const std::string message = pg_error_message(connection_);
    if (connection_ != nullptr) PQfinish(connection_);
    connection_ = nullptr;
    throw MerchantDatabaseError(
        fmt::format("merchant database postgresql {}: cannot connect: {}", params_.where(), message));
  }
  // The server's notices (an idempotent step's "already exists, skipping") are not the daemon's output.
  PQsetNoticeProcessor(connection_, [](void*, const char*) {}, nullptr);
  description_ = fmt::format("postgresql host={} port={} dbname={} user={}", PQhost(connection_), PQport(connection_),
                             PQdb(connection_), PQuser(connection_));
  // Times come back in UTC and ISO form, whatever the server's defaults; no statement waits on a lock
  // longer than statement_timeout.
  run("setting up the session",
      "SELECT set_config('statement_timeout', $1, false), set_config('TimeZone', 'UTC', false), "
      "set_config('DateStyle', 'ISO, YMD', false), set_config('default_transaction_read_only', $2, false)",
      {std::to_string(config_.statement_timeout.count()), read_only_ ? "on" : "off"});
}

std::string PostgresConnection::source_table(std::string_view name) const {
  return fmt::format("{}.{}", sql_name(source_schema_), sql_name(name));
}

std::string PostgresConnection::result_table(std::string_view name) const {
  return fmt::format("{}.{}", sql_name(result_schema_), sql_name(prefix_ + std::string(name)));
}

PgResult PostgresConnection::run(std::string_view task, const std::string& sql, std::span<const PgParam> params) {
  reconnect_if_lost(task);
  std::vector<const char*> values;
  for (const PgParam& param : params) values.push_back(param ? param->c_str() : nullptr);
  PgResult result(PQexecParams(connection_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                               nullptr, nullptr, 0));
  const PGresult* raw = result.raw();
  const ExecStatusType status = PQresultStatus(raw);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    const char* sqlstate = PQresultErrorField(raw, PG_DIAG_SQLSTATE);
    const std::string message = trimmed(raw != nullptr ? PQresultErrorMessage(raw) : PQerrorMessage(connection_));
    fail(task, sqlstate != nullptr ? fmt::format("{} (SQLSTATE {})", message, sqlstate) : message);
  }
  return result;
}

void PostgresConnection::reconnect_if_lost(std::string_view task) {
  if (connection_ != nullptr && PQstatus(connection_) != CONNECTION_BAD) return;
  // A connection lost between transactions (a server restart) is opened again. Inside one, the
  // transaction died with it: its statements must not go on, committed one by one on a new connection.
  if (in_transaction_) fail(task, "the connection was lost inside the transaction");
  connect();
}

void PostgresConnection::run_script(std::string_view task, const std::string& sql) {
  reconnect_if_lost(task);
  PgResult result(PQexec(connection_, sql.c_str()));
  const ExecStatusType status = PQresultStatus(result.raw());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    fail(task, trimmed(result.raw() != nullptr ? PQresultErrorMessage(result.raw()) : PQerrorMessage(connection_)));
  }
}

void PostgresConnection::begin(std::string_view task, Transaction kind) {
  run(task, kind == Transaction::read_snapshot ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN");
  in_transaction_ = true;
}

void PostgresConnection::commit(std::string_view task) {
  run(task, "COMMIT");
  in_transaction_ = false;
}

void PostgresConnection::rollback() noexcept {
  in_transaction_ = false;
  // Nothing to roll back on a broken connection: the server ended the transaction with it.
  if (connection_ == nullptr || PQstatus(connection_) != CONNECTION_OK) return;
  PQclear(PQexec(connection_, "ROLLBACK"));
}

PgUpsert::PgUpsert(PostgresConnection& connection, std::string table, std::optional<OnConflict> on_conflict)
    : connection_(connection), table_(std::move(table)), on_conflict_(std::move(on_conflict)) {}

int PgUpsert::write(SqlValues row) {
  if (sql_.empty()) {
    sql_ = upsert_sql(table_, row, on_conflict_,
                      [](std::size_t index, std::string_view) { return fmt::format("${}", index + 1); });
  }
  return connection_.run(fmt::format("writing {}", table_), sql_, parameters(row)).changed();
}

std::vector<PgParam> parameters(SqlValues values) {
  std::vector<PgParam> params;
  for (const Named& named : values) params.push_back(named.value.text());
  return params;
}

void PostgresConnection::fail(std::string_view task, std::string_view message) const {
  throw MerchantDatabaseError(fmt::format("merchant database {}: {}: {}", description_, task, message));
}

}  // namespace fulfillsync::merchant
