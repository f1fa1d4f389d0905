#include "fulfillsync/merchant/sqlite_check.hpp"

#include <unistd.h>

#include <filesystem>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>

#include "fulfillsync/merchant/source_rows.hpp"
#include "fulfillsync/schema/migrations.hpp"
#include "source_assembly.hpp"
#include "sqlite_contract.hpp"

namespace fulfillsync::merchant {
namespace {

using Level = Finding::Level;

std::string quoted(std::string_view identifier) {
  std::string out = "\"";
  for (char c : identifier) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// "table", "view", or "" when there is no such object.
std::string object_type(SQLite::Database& db, std::string_view name) {
  SQLite::Statement query(db, "SELECT type FROM sqlite_master WHERE name = ?1");
  query.bind(1, std::string(name));
  return query.executeStep() ? query.getColumn(0).getString() : "";
}

// How changes will be found: by the change log where the tables keep it, by updated_at otherwise
// (source_intake.hpp). Without the log a clock stepping back hides rows, and as updated_at is
// compared as an instant, no plain index serves the poll.
void check_change_detection(SQLite::Database& db, std::vector<Finding>& findings) {
  const bool change_log = object_type(db, "fulfillsync_changes") == "table";
  for (const std::string_view table : {kOrdersTable, kReturnsTable}) {
    const std::string type = object_type(db, table);
    if (type == "view") {
      findings.push_back({Level::ok, std::string(table),
                          "a view: changes are found by updated_at, read as an instant (a view cannot carry the "
                          "change log's triggers); each poll after a commit reads through it in full"});
    } else if (type == "table" && change_log) {
      findings.push_back({Level::ok, std::string(table), "changes are read by the change log (fulfillsync_changes)"});
    } else if (type == "table") {
      findings.push_back({Level::warning, std::string(table),
                          "no change log: changes are found by updated_at, which a merchant clock stepping back can "
                          "hide, and each poll after a commit scans the table; fix: fulfillsyncd upgrade-source "
                          "(schema/merchant/change_log/)"});
    }
  }
}

// The catalog's tables, where push_products reads them, and whether its change log sees their changes.
void check_catalog(SQLite::Database& db, std::vector<Finding>& findings) {
  const auto problems = contract_problems(db, catalog_contract());
  for (const auto& problem : problems) {
    findings.push_back({Level::error, "catalog tables",
                        problem + "; push_products reads it: create it as in schema/merchant/source_tables.sql, or a "
                                  "view of that name over the shop's catalog (schema/merchant/README.md, Catalog)"});
  }
  if (!problems.empty()) return;
  findings.push_back({Level::ok, "catalog tables", "every table and column push_products reads"});
  if (object_type(db, kProductsTable) == "view" || object_type(db, kVariantsTable) == "view") {
    findings.push_back({Level::ok, "catalog change detection",
                        "views (they cannot carry the change log's triggers): each push_products pass reads and "
                        "compares the whole catalog"});
  } else if (object_type(db, "fulfillsync_changes") != "table" || !catalog_change_log_installed(db)) {
    findings.push_back({Level::warning, "catalog change detection",
                        "the change log's catalog triggers are missing: the daemon cannot tell what changed, so "
                        "each push_products pass reads and compares the whole catalog; fix: fulfillsyncd "
                        "upgrade-source (schema/merchant/catalog_change_log.sql)"});
  } else {
    findings.push_back({Level::ok, "catalog change detection",
                        "changes are read by the change log (fulfillsync_changes)"});
  }
}

void check_result_tables(SQLite::Database& db, const config::MerchantConfig& config, std::vector<Finding>& findings) {
  const std::string subject = fmt::format("result tables (prefix {})", config.result_table_prefix);
  const ResultMigrations migrations(config.result_table_prefix, schema::merchant_result_migrations());
  const int newest = static_cast<int>(migrations.steps().size());
  const int version = sqlite::schema_version(db, migrations.version_table());
  if (version > newest) {
    findings.push_back({Level::error, subject,
                        fmt::format("at schema version {}, written by a newer fulfillsync (this one writes {}); run "
                                    "the newer fulfillsync or restore a backup taken before the upgrade",
                                    version, newest)});
    return;
  }
  if (version == newest) {
    findings.push_back({Level::ok, subject, fmt::format("present at schema version {}", version)});
    return;
  }
  if (!config.manage_result_tables) {
    findings.push_back({Level::error, subject,
                        fmt::format("at schema version {}, this fulfillsync writes version {}; fix: apply "
                                    "schema/merchant/results/*.sql with the prefix, or set "
                                    "merchant.manage_result_tables: true",
                                    version, newest)});
    return;
  }
  // What the migrations would create, tried on an empty database in memory: the real one is not
  // written, and a name SQLite refuses (the prefix sqlite_ is its own) fails here the same way.
  SQLite::Database trial(":memory:", SQLite::OPEN_READWRITE);
  if (version == 0) {
    try {
      sqlite::migrate(trial, migrations.steps(), migrations.version_table(), "the result tables");
    } catch (const std::exception& e) {
      findings.push_back({Level::error, subject,
                          fmt::format("cannot be created: {}; fix: choose another merchant.result_table_prefix",
                                      e.what())});
      return;
    }
    SQLite::Statement created(trial, "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'");
    while (created.executeStep()) {
      const std::string name = created.getColumn(0).getString();
      if (!object_type(db, name).empty()) {
        findings.push_back({Level::error, subject,
                            fmt::format("{} exists already but is not fulfillsync's (no {}); fix: choose another "
                                        "merchant.result_table_prefix, or rename that object",
                                        name, migrations.version_table())});
        return;
      }
    }
    findings.push_back({Level::ok, subject, "absent; run creates them"});
    return;
  }
  findings.push_back(
      {Level::ok, subject, fmt::format("at schema version {}; run migrates them to version {}", version, newest)});
}

// The daemon writes its result tables, and SQLite its journal or -wal and -shm files beside the database.
void check_writable(const std::filesystem::path& path, std::vector<Finding>& findings) {
  const std::filesystem::path directory = path.parent_path().empty() ? "." : path.parent_path();
  for (const auto& [what, file] : {std::pair{"the database", path}, std::pair{"its directory", directory}}) {
    if (::access(file.c_str(), W_OK) != 0) {
      findings.push_back({Level::error, "merchant.sqlite.path",
                          fmt::format("{} {} is not writable by this user (uid {}): the daemon writes its result "
                                      "tables there and SQLite its journal files beside it; see the README's 'A "
                                      "merchant database owned by another application'",
                                      what, file.string(), ::geteuid())});
    }
  }
}

}  // namespace

bool column_exists(SQLite::Database& db, std::string_view table, std::string_view column) {
  try {
    SQLite::Statement probe(db, "SELECT t." + quoted(column) + " FROM " + quoted(table) + " AS t LIMIT 0");
    probe.executeStep();
    return true;
  } catch (const SQLite::Exception&) {
    return false;
  }
}

std::string select_column(SQLite::Database& db, std::string_view table, std::string_view alias,
                          std::string_view column, bool optional) {
  if (optional && !column_exists(db, table, column)) return "NULL";
  return std::string(alias) + "." + quoted(column);
}

std::vector<std::string> contract_problems(SQLite::Database& db, const std::vector<ContractTable>& contract) {
  std::vector<std::string> problems;
  const auto check = [&](std::string_view table, std::vector<std::string_view> columns) {
    for (std::string_view column : columns) {
      try {
        // Stepped, not only prepared: a schema changed by another connection shows at the step.
        SQLite::Statement probe(db, "SELECT t." + quoted(column) + " FROM " + quoted(table) + " AS t LIMIT 0");
        probe.executeStep();
      } catch (const SQLite::Exception& e) {
        problems.push_back(fmt::format("{}.{}: {}", table, column, e.what()));
        if (std::string_view(e.what()).find("no such table") != std::string_view::npos) return;
      }
    }
  };
  for (const ContractTable& table : contract) check(table.name, table.columns);
  return problems;
}

bool catalog_change_log_installed(SQLite::Database& db) {
  SQLite::Statement triggers(db, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ("
                                 "'fulfillsync_products_log_insert', 'fulfillsync_products_log_update', "
                                 "'fulfillsync_products_log_delete', 'fulfillsync_variants_log_insert', "
                                 "'fulfillsync_variants_log_update', 'fulfillsync_variants_log_delete')");
  triggers.executeStep();
  return triggers.getColumn(0).getInt() == 6;
}

std::vector<Finding> check_sqlite_merchant_database(const config::MerchantConfig& config, bool catalog) {
  const std::filesystem::path& path = config.sqlite.path;
  std::vector<Finding> findings;
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    findings.push_back({Level::error, "merchant.sqlite.path",
                        fmt::format("{} does not exist; the shop application creates it (fulfillsyncd never does): "
                                    "fix the path",
                                    path.string())});
    return findings;
  }
  try {
    SQLite::Database db(path.string(), SQLite::OPEN_READONLY);
    db.setBusyTimeout(static_cast<int>(config.sqlite.busy_timeout.count()));
    SQLite::Statement(db, "SELECT count(*) FROM sqlite_master").executeStep();  // fails on a file that is not one
    findings.push_back({Level::ok, "merchant.sqlite.path", fmt::format("{} opens (read-only)", path.string())});
    check_writable(path, findings);

    const auto problems = contract_problems(db, source_contract());
    for (const auto& problem : problems) {
      findings.push_back({Level::error, "source tables",
                          problem + "; fix: create it as in schema/merchant/source_tables.sql, or a view of that "
                                    "name over the shop's own table (schema/merchant/README.md)"});
    }
    if (problems.empty()) findings.push_back({Level::ok, "source tables", "every table and column of the contract"});
    check_change_detection(db, findings);
    if (catalog) check_catalog(db, findings);
    check_result_tables(db, config, findings);
  } catch (const std::exception& e) {
    findings.push_back({Level::error, "merchant.sqlite.path", fmt::format("{}: {}", path.string(), e.what())});
  }
  return findings;
}

}  // namespace fulfillsync::merchant
