#include "fulfillsync/daemon/cli/cli.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include "cli/auth_login.hpp"
#include "cli/config_check.hpp"
#include "cli/dry_run.hpp"
#include "cli/recover_store.hpp"
#include "cli/resync.hpp"
#include "cli/status_report.hpp"
#include "fulfillsync/common/invariant.hpp"
#include "fulfillsync/common/logging.hpp"
#include "fulfillsync/common/printable.hpp"
#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/common/version.hpp"
#include "fulfillsync/config/loader.hpp"
#include "fulfillsync/daemon/job/failpoints.hpp"
#include "fulfillsync/merchant/merchant_database.hpp"
#include "service/service.hpp"

namespace fulfillsync::daemon {
namespace {

// Every check on its own line on stdout; exit_code::config when one of them is an error.
int check_config(const CommandLine& line) {
  std::optional<config::Config> config;
  try {
    // The secret files are checked below, each on its line, with the rest.
    config = config::load_file(line.config_path, config::Secrets::skip);
  } catch (const config::ConfigError& error) {
    for (const auto& diagnostic : error.diagnostics()) std::cout << "ERROR " << diagnostic.to_string() << '\n';
    std::cout << "configuration " << line.config_path.string() << ": errors found\n";
    return exit_code::config;
  }
  int errors = 0, warnings = 0;
  for (const ConfigCheck& check : check_configuration(*config, line.online)) {
    std::cout << format_check(check) << '\n';
    errors += check.level == ConfigCheck::Level::error ? 1 : 0;
    warnings += check.level == ConfigCheck::Level::warning ? 1 : 0;
  }
  if (errors > 0) {
    std::cout << fmt::format("configuration {}: {} errors, {} warnings\n", line.config_path.string(), errors,
                             warnings);
    return exit_code::config;
  }
  std::cout << fmt::format("configuration {}: OK{}\n", line.config_path.string(),
                           warnings > 0 ? fmt::format(" ({} warnings)", warnings) : "");
  return exit_code::ok;
}

int login(const CommandLine& line) {
  try {
    return auth_login(config::load_file(line.config_path));
  } catch (const config::ConfigError& error) {
    for (const auto& diagnostic : error.diagnostics()) std::cerr << diagnostic.to_string() << '\n';
    return exit_code::config;
  }
}

// `secrets`: skipped by the commands that never use the token (status, retry, resync), so that an
// operator who cannot read it can run them.
std::optional<config::Config> load_or_report(const CommandLine& line, config::Secrets secrets) {
  try {
    return config::load_file(line.config_path, secrets);
  } catch (const config::ConfigError& error) {
    for (const auto& diagnostic : error.diagnostics()) spdlog::critical("{}", diagnostic.to_string());
    return std::nullopt;
  }
}

int run(const CommandLine& line) {
  // A dry run sends nothing, so it needs no token.
  auto config = load_or_report(line, line.dry_run ? config::Secrets::skip : config::Secrets::check);
  if (!config) return exit_code::config;
  if (line.dry_run) return dry_run(*config);
  const int failing_after = config->api.retry.attempts;  // as status counts a failing job
  std::unique_ptr<Service> service;
  try {
    arm_failpoints_from_environment();
    service = std::make_unique<Service>(line.config_path, std::move(*config), line.log_level,
                                        line.command == Command::once ? Service::Mode::once : Service::Mode::run);
  } catch (const CheckpointStoreDamaged& e) {
    spdlog::critical("cannot start: {}", damaged_store_advice(e, line.config_path));
    return exit_code::io_error;
  } catch (const std::exception& e) {
    // No retry here: the start ends. Under systemd the unit's Restart=on-failure is the retry.
    spdlog::critical("cannot start: {}; exiting with status {}{}", e.what(), exit_code::unavailable,
                     line.command == Command::once ? ""
                                                   : " (EX_UNAVAILABLE): under systemd, the packaged unit starts "
                                                     "fulfillsyncd again (Restart=on-failure, RestartSec=5s)");
    return exit_code::unavailable;
  }
  const int code = service->run();
  if (line.command == Command::once) {
    try {
      std::fputs((format_summary(service->ledger()) + '\n' +
                  format_pull_side(service->checkpoint(), failing_after)).c_str(),
                 stdout);
      std::fflush(stdout);
    } catch (const std::exception& e) {
      spdlog::error("cannot summarise the run: {}", e.what());
    }
  }
  return code;
}

// `status` and `retry` work beside a running daemon: they open its store without taking its lock.
int status(const CommandLine& line) {
  auto config = load_or_report(line, config::Secrets::skip);
  if (!config) return exit_code::config;
  // Opening a missing store beside the daemon would say "unable to open database file".
  std::error_code ignored;
  if (!std::filesystem::exists(config->checkpoint.path, ignored)) {
    if (line.json) std::cout << format_status_json(config->checkpoint.path, nullptr, DaemonStatus{});
    std::cerr << fmt::format("fulfillsyncd: the daemon has never run with this config: its checkpoint store {} does "
                             "not exist yet (checkpoint.path in {})\n",
                             config->checkpoint.path.string(), line.config_path.string());
    return exit_code::status_not_running;
  }
  DaemonStatus daemon;
  try {
    CheckpointStore store(config->checkpoint.path, CheckpointStore::Access::alongside);
    OutboundLedger ledger(store);
    daemon = read_daemon_status(store, config->api.retry.attempts);
    std::unique_ptr<merchant::MerchantDatabase> merchant;
    try {
      merchant = merchant::open_merchant_database(config->merchant);
    } catch (const merchant::MerchantDatabaseError& e) {
      spdlog::warn("without the merchant database: {}", e.what());
    }
    merchant::SyncResults* const results = merchant ? &merchant->results() : nullptr;
    merchant::SourceTables* const source = merchant ? &merchant->source() : nullptr;
    const auto catalog = read_catalog_status(ledger, source, config->sync.push_products.enabled);
    if (line.json) {
      std::cout << format_status_json(store.path(), &ledger, daemon, results,
                                      source_rows_waiting(store, ledger, source), catalog);
    } else {
      std::cout << format_status(store, ledger, source, results, daemon, catalog);
    }
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return exit_code::unavailable;
  }
  switch (daemon.health) {
    case Health::healthy: return exit_code::ok;
    case Health::failing: return exit_code::status_failing;
    case Health::not_running: return exit_code::status_not_running;
  }
  FULFILLSYNC_UNREACHABLE("a Health value");
}

// "its create is rejected, its latest update applied": where a product the operator named stands.
std::optional<std::string> product_ledger_state(OutboundLedger& ledger, std::string_view reference) {
  const auto create = ledger.find(LedgerKind::product_create, reference);
  if (!create) return std::nullopt;
  const auto update = ledger.find(LedgerKind::product_update, reference);
  return fmt::format("its create is {}{}", to_string(create->state),
                     update ? fmt::format(", the update of its latest change {}", to_string(update->state)) : "");
}

// Requeues `reference`'s rejected entries of the kinds `of_kind` accepts; how many.
template <typename Filter>
int requeue_reference(OutboundLedger& ledger, const std::string& reference, std::string_view named_as, Filter of_kind) {
  int requeued = 0;
  for (const LedgerKind kind : kLedgerKinds) {
    if (!of_kind(kind) || !ledger.requeue(kind, reference)) continue;
    std::cout << fmt::format("{} {}{} requeued{}\n", to_string(kind), shortened_reference(reference), named_as,
                             builds_from_source(kind)
                                 ? ": push_products takes the product again at its next run, as the catalog has it"
                                 : "");
    ++requeued;
  }
  return requeued;
}

bool any_kind(LedgerKind) { return true; }

// retry --product REFERENCE_ID, retry --sku SKU: the catalog's entries of the product(s).
int retry_products(const config::Config& config, OutboundLedger& ledger, const CommandLine& line) {
  std::vector<std::string> references;
  if (line.retry_product) {
    references.push_back(*line.retry_product);
  } else {
    try {
      const auto merchant = merchant::open_merchant_database_read_only(config.merchant);
      references = products_with_sku(merchant->source(), *line.retry_sku);
    } catch (const merchant::MerchantDatabaseError& e) {
      std::cerr << fmt::format("fulfillsyncd: cannot find SKU '{}' in {}: {}\n", shortened_reference(*line.retry_sku),
                               merchant::kVariantsTable, text::printable(e.what()));
      return exit_code::unavailable;
    }
    if (references.empty()) {
      std::cerr << fmt::format("fulfillsyncd: no product has SKU '{}': no row of {} has it\n",
                               shortened_reference(*line.retry_sku), merchant::kVariantsTable);
      return exit_code::data_error;
    }
  }
  const std::string named_as = line.retry_sku ? fmt::format(" (SKU {})", shortened_reference(*line.retry_sku)) : "";
  int requeued = 0;
  std::vector<std::string> standing;
  for (const std::string& reference : references) {
    const int done = requeue_reference(ledger, reference, named_as, builds_from_source);
    requeued += done;
    if (done > 0) continue;
    const auto state = product_ledger_state(ledger, reference);
    standing.push_back(state ? fmt::format("product '{}' has nothing rejected to retry: {}",
                                           shortened_reference(reference), *state)
                             : fmt::format("no product '{}' is known: push_products has not taken a product with "
                                           "this reference_id from {}",
                                           shortened_reference(reference), merchant::kProductsTable));
  }
  if (requeued > 0) return exit_code::ok;
  std::cerr << fmt::format("fulfillsyncd: {}{}\n", named_as.empty() ? "" : fmt::format("SKU '{}': ", *line.retry_sku),
                           fmt::join(standing, "; "));
  return exit_code::data_error;
}

int retry(const CommandLine& line) {
  auto config = load_or_report(line, config::Secrets::skip);
  if (!config) return exit_code::config;
  try {
    CheckpointStore store(config->checkpoint.path, CheckpointStore::Access::alongside);
    OutboundLedger ledger(store);
    if (line.retry_rejected) {
      std::cout << fmt::format("{} rejected entries requeued\n", ledger.requeue_all_rejected());
      return exit_code::ok;
    }
    if (line.retry_product || line.retry_sku) return retry_products(*config, ledger, line);
    if (requeue_reference(ledger, *line.retry_reference, "", any_kind) == 0) {
      std::cerr << fmt::format("fulfillsyncd: nothing to requeue for '{}': no entry the provider rejected has it (a "
                               "row that failed local validation is sent again once it is fixed)\n",
                               shortened_reference(*line.retry_reference));
      return exit_code::data_error;
    }
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return exit_code::unavailable;
  }
  return exit_code::ok;
}

int resync_command(const CommandLine& line) {
  auto config = load_or_report(line, config::Secrets::skip);
  if (!config) return exit_code::config;
  const auto since = timestamps::parse_iso8601(*line.resync_since);
  try {
    CheckpointStore store(config->checkpoint.path, CheckpointStore::Access::alongside);
    for (const std::string& done : resync(store, *since, line.resync_job)) std::cout << done << '\n';
  } catch (const std::invalid_argument& e) {
    std::cerr << "fulfillsyncd: " << e.what() << '\n';
    return exit_code::usage;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return exit_code::unavailable;
  }
  return exit_code::ok;
}

// Adds the change log to the merchant's source tables, then the catalog's change triggers where the
// catalog's tables exist (schema/merchant/README.md). Safe beside the shop application and a running
// daemon; running it again changes nothing.
int upgrade_source(const CommandLine& line) {
  auto config = load_or_report(line, config::Secrets::skip);
  if (!config) return exit_code::config;
  try {
    const auto merchant = merchant::open_merchant_database(config->merchant);
    const bool added = merchant->source().install_change_log();
    std::cout << (added ? fmt::format("{}: change log added; the daemon reads by it from its next start\n",
                                      merchant->describe())
                        : fmt::format("{}: change log present; nothing to do\n", merchant->describe()));
    using CatalogUpgrade = merchant::SourceTables::CatalogUpgrade;
    switch (merchant->source().install_catalog_change_order()) {
      case CatalogUpgrade::added:
        std::cout << fmt::format("{}: catalog change triggers added; push_products reads only what changed from "
                                 "its next pass\n",
                                 merchant->describe());
        break;
      case CatalogUpgrade::present:
        std::cout << fmt::format("{}: catalog change triggers present; nothing to do\n", merchant->describe());
        break;
      case CatalogUpgrade::no_catalog:
        std::cout << fmt::format("{}: no catalog tables (fulfillsync_products and fulfillsync_variants as tables); "
                                 "catalog change triggers skipped\n",
                                 merchant->describe());
        break;
    }
  } catch (const merchant::MerchantDatabaseError& e) {
    spdlog::critical("{}", e.what());
    return exit_code::unavailable;
  }
  return exit_code::ok;
}

int recover_store_command(const CommandLine& line) {
  auto config = load_or_report(line, config::Secrets::check);
  if (!config) return exit_code::config;
  return recover_store(line, std::move(*config));
}

int backup_command(const CommandLine& line) {
  auto config = load_or_report(line, config::Secrets::skip);
  if (!config) return exit_code::config;
  return backup_store(config->checkpoint.path, *line.backup_file);
}

// Each command: its name as typed, its usage, its lines in the main --help, and the rest of its own
// --help (what it does, its options, its exit status when it has its own). A new command is a row
// here, a Command and a case in main().
struct Subcommand {
  Command command;
  std::string_view name;     // as typed: "auth login"
  std::string_view usage;    // after "Usage: fulfillsyncd [OPTIONS] "
  std::string_view listing;  // its lines under "Commands:" in fulfillsyncd --help
  std::string_view help;     // its own --help between the usage line and the common options
};

constexpr std::array kSubcommands = {
    Subcommand{Command::run, "run", "run [--dry-run]",
               "  run                   run the daemon until SIGTERM (the default)\n",
               "Runs the daemon until SIGTERM or SIGINT: pushes the merchant's new orders, cancels and returns,\n"
               "pulls shipments, tracking, returns and lot levels, and serves the metrics; SIGHUP reloads the\n"
               "configuration. The default command, and what the systemd unit runs.\n"
               "\n"
               "Options:\n"
               "      --dry-run          read the merchant's rows, build and validate every request, log them\n"
               "                         (personal data redacted); with push_products on, each product too\n"
               "                         (created with its variants, updated with only what changed, or\n"
               "                         rejected); sends and writes nothing: the merchant database and the\n"
               "                         checkpoint store are only read, a missing store is not created, a\n"
               "                         missing merchant database exits 69\n"},
    Subcommand{Command::once, "once", "once [--dry-run]",
               "  once                  run every job until nothing is left to do, print a summary and exit\n"
               "                        (see Exit status)\n",
               "Runs every job until nothing is left to do, prints a summary and exits: for a cron job, a first\n"
               "catch-up, or a test.\n"
               "\n"
               "Options:\n"
               "      --dry-run          as with run: build and validate every request, send nothing\n"
               "\n"
               "Exit status:\n"
               "  0   all done\n"
               "  65  done, but rows stay rejected or tracking marks are refused\n"
               "  69  the provider cannot be reached within api.retry, or a job failed api.retry.attempts\n"
               "      runs in a row\n"
               "  74  the checkpoint store is damaged: run recover-store\n"
               "  75  stopped with work left, by SIGTERM/SIGINT or because the provider refused the\n"
               "      credentials; the next start resumes it\n"
               "  78  the provider refused the token, has no channel to create orders in, or its TLS\n"
               "      certificate is not trusted (api.ca_file)\n"},
    Subcommand{Command::status, "status", "status [--json]",
               "  status [--json]       whether a daemon runs on the checkpoint store (PID, uptime) and what it\n"
               "                        waits for; each job's state, last success, lag, the provider's last\n"
               "                        answer and its last error; the outbound backlog by state, the oldest\n"
               "                        waiting entry, the latest rejections, the catalog's backlog and\n"
               "                        rejections and the tracking marks (works beside a running daemon;\n"
               "                        exit 0, 1 or 3: see Exit status)\n",
               "Shows whether a daemon runs on the configured checkpoint store (PID, version, uptime) and what\n"
               "it waits for, and a line when nothing has ever succeeded; each job's state, runs, failures,\n"
               "items, last success, lag, the provider's last answer (HTTP status, when) and its last error;\n"
               "the outbound backlog by state, the oldest waiting entry, the latest rejections with their\n"
               "reasons, and the tracking marks. With push_products on, the catalog too, read whole and\n"
               "compared with the ledger: products not created yet, with changes not sent yet, awaiting an\n"
               "unclear outcome and rejected, and each rejection with its product, SKUs and reason. Works\n"
               "beside a running daemon, and without the token.\n"
               "\n"
               "Job states: ok; retrying (its last run failed); failing (its last api.retry.attempts runs\n"
               "failed); paused (the provider refused the credentials or its certificate: an operator must\n"
               "act); not_run (no run yet). The jobs' figures are those the daemon saved last (every\n"
               "sync.progress_interval).\n"
               "\n"
               "Options:\n"
               "      --json             one JSON object instead, for scripts (its fields: README, \"status\")\n"
               "\n"
               "Exit status:\n"
               "  0   a daemon runs, and no job is failing or paused\n"
               "  1   a daemon runs, but a job is failing or paused, or the jobs wait for the provider's\n"
               "      first answer\n"
               "  3   no daemon runs on this checkpoint store (as systemctl status), or none has ever run\n"
               "      with this configuration\n"
               "  69  the checkpoint store cannot be read\n"
               "  78  configuration error\n"},
    Subcommand{Command::retry, "retry",
               "retry REFERENCE_ID | retry --product REFERENCE_ID | retry --sku SKU | retry --rejected",
               "  retry REFERENCE_ID    send a rejected order, cancel or return again as it is; a rejected\n"
               "                        product is taken again by push_products' next run\n"
               "  retry --product REFERENCE_ID | --sku SKU\n"
               "                        the same for a product only, named by its reference or a SKU\n"
               "  retry --rejected      the same for every rejected entry\n",
               "Sends an order, cancel or return the provider rejected again as it is (after the provider's\n"
               "side was fixed: a missing product, say). A row that failed local validation is sent again by\n"
               "itself once it is fixed. A rejected product (its create, or the update of its latest change)\n"
               "is taken again by push_products' next run as the catalog has it, built and checked anew,\n"
               "whatever rejected it (the provider, or a local rule: after api.version changed, say). Works\n"
               "beside a running daemon.\n"
               "\n"
               "Options:\n"
               "      --product REFERENCE_ID  the product with this fulfillsync_products.reference_id only\n"
               "      --sku SKU          the product whose variant has this SKU (read from fulfillsync_variants)\n"
               "      --rejected         every rejected entry instead of one\n"
               "\n"
               "Exit status: 0 requeued; 65 nothing rejected has that reference id, or no product has it or\n"
               "that SKU; 69 a store or the merchant database cannot be read.\n"},
    Subcommand{Command::resync, "resync", "resync --since DATE [--job NAME]",
               "  resync --since DATE [--job NAME]\n"
               "                        read again what the provider changed since DATE: moves pull_shipments\n"
               "                        and pull_returns (or the one named) back (works beside a running daemon)\n",
               "Reads again what the provider changed since DATE: moves the windows of pull_shipments and\n"
               "pull_returns (or of the job named) back to DATE. Works beside a running daemon.\n"
               "\n"
               "Options:\n"
               "      --since DATE       2026-03-01 or 2026-03-01T12:00:00Z (required)\n"
               "      --job NAME         pull_shipments or pull_returns only\n"},
    Subcommand{Command::check_config, "check-config", "check-config [--online]",
               "  check-config [--online]\n"
               "                        check what run would meet, writing nothing: the file, the merchant\n"
               "                        database (read-only: source tables, their change log, the catalog's\n"
               "                        tables and triggers where push_products is on, the result tables), the\n"
               "                        checkpoint store's directory, the token file and sync.orders_since; one\n"
               "                        line per check, OK, WARN or ERROR with the fix; --online also asks the\n"
               "                        provider (GET /channel) and shows the channel it would use\n",
               "Checks what run would meet, writing nothing: the file, the merchant database (read-only: source\n"
               "tables, their change log, the catalog's tables and change triggers where push_products is on,\n"
               "the result tables), the checkpoint store's directory, the token file and sync.orders_since. One\n"
               "line per check, OK, WARN or ERROR with the fix; a missing table, column or privilege is one\n"
               "line naming the table.\n"
               "\n"
               "Options:\n"
               "      --online           also ask the provider (GET /channel) and show the channel it would use\n"
               "\n"
               "Exit status: 0 no errors (warnings allowed); 78 an error.\n"},
    Subcommand{Command::upgrade_source, "upgrade-source", "upgrade-source",
               "  upgrade-source        add the change log and its triggers to the merchant's source tables\n"
               "                        (SQLite: schema/merchant/change_log/; PostgreSQL: the change order), and\n"
               "                        the catalog's change triggers where the catalog's tables exist, so\n"
               "                        changes are found whatever the clock says; safe while the shop writes;\n"
               "                        running it again changes nothing (tables only, not views)\n",
               "Adds the change log and its triggers to the merchant's source tables (SQLite:\n"
               "schema/merchant/change_log/; PostgreSQL: schema/merchant/postgresql/change_order/), so that\n"
               "the daemon finds changes by a sequence the database assigns, whatever the merchant server's\n"
               "clock says. Then, where fulfillsync_products and fulfillsync_variants are tables, the\n"
               "catalog's change triggers (schema/merchant/catalog_change_log.sql, or\n"
               "postgresql/catalog_change_order.sql), so that push_products reads only what changed; without\n"
               "catalog tables it notes that it skipped them. Each in one transaction, safe while the shop\n"
               "application writes and beside a running daemon, which reads by the log from its next start\n"
               "(push_products from its next pass). Running it again changes nothing. Tables only: a view has\n"
               "no triggers.\n"
               "\n"
               "Exit status: 0 added or already present; 69 the merchant database cannot be written; 78\n"
               "configuration error.\n"},
    Subcommand{Command::auth_login, "auth login", "auth login",
               "  auth login            sign in with OAuth (api.oauth) once; the daemon then refreshes the tokens itself\n",
               "Signs in with OAuth (api.oauth) once, at installation: prints the address to open in a\n"
               "browser, takes the callback on api.oauth.redirect_uri (or the callback address pasted on\n"
               "standard input), and keeps the tokens in the checkpoint store. The daemon then refreshes\n"
               "them itself.\n"},
    Subcommand{Command::recover_store, "recover-store", "recover-store",
               "  recover-store         for a damaged checkpoint store (exit 74), the daemon stopped: moves the\n"
               "                        store aside, creates a fresh one, rebuilds it from the merchant's result\n"
               "                        tables, checks what it adopted at the provider and prints it\n",
               "For a checkpoint store that is damaged (run and once exit 74), with the daemon stopped: moves\n"
               "the store and its -wal and -shm files aside as FILE.damaged-TIMESTAMP, creates a fresh store,\n"
               "adopts every order and return the merchant's result tables record as created (no request is\n"
               "sent for them), checks them at the provider in reads of 250 ids, writes the result rows and\n"
               "prints what it adopted. Refused while a daemon holds the store.\n"
               "\n"
               "Exit status: 0 rebuilt; 69 the store is in use or cannot be created, or the provider cannot be\n"
               "reached; 78 configuration error.\n"},
    Subcommand{Command::backup, "backup", "backup FILE",
               "  backup FILE           a consistent copy of the checkpoint store (SQLite's online backup),\n"
               "                        beside a running daemon; prints the copy's ledger size and newest change\n",
               "Copies the checkpoint store to FILE with SQLite's online backup: one consistent snapshot, taken\n"
               "beside a running daemon, mode 0600 (it holds tokens). Prints what the copy holds: its ledger\n"
               "entries, its newest transition and its schema version.\n"
               "\n"
               "Exit status: 0 copied; 69 the store cannot be read or FILE cannot be written; 78 configuration\n"
               "error.\n"},
};

const Subcommand& subcommand(Command command) {
  for (const Subcommand& entry : kSubcommands) {
    if (entry.command == command) return entry;
  }
  FULFILLSYNC_UNREACHABLE("every command with a usage has a row");
}

// The command whose words start at args[i], and how many words it takes.
std::optional<std::pair<Command, std::size_t>> command_at(const std::vector<std::string>& args, std::size_t i) {
  for (const Subcommand& entry : kSubcommands) {
    std::size_t words = 0;
    std::size_t at = 0;
    bool matches = true;
    while (matches && at <= entry.name.size()) {
      const std::size_t space = std::min(entry.name.find(' ', at), entry.name.size());
      matches = i + words < args.size() && args[i + words] == entry.name.substr(at, space - at);
      ++words;
      at = space + 1;
    }
    if (matches) return std::pair{entry.command, words};
  }
  return std::nullopt;
}

// The command named on a command line, skipping the values of the common options; for --help and
// for a usage error's hint.
std::optional<Command> named_command(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-c" || args[i] == "--config" || args[i] == "-l" || args[i] == "--log-level") {
      ++i;
    } else if (const auto found = command_at(args, i)) {
      return found->first;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<CommandLine> parse_command_line(const std::vector<std::string>& args, std::string& error) {
  CommandLine line;
  // --help and --version win over everything else: `retry --help` needs no REFERENCE_ID.
  for (const std::string& arg : args) {
    if (arg == "-V" || arg == "--version") {
      line.command = Command::version;
      return line;
    }
    if (arg == "-h" || arg == "--help") {
      line.command = Command::help;
      line.help_topic = named_command(args);
      return line;
    }
  }
  bool command_seen = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    // Options take their value as the next word or after '='.
    const auto value_of = [&](std::string_view name) -> std::optional<std::string> {
      if (arg == name) {
        if (i + 1 >= args.size()) {
          error = fmt::format("{} needs a value", name);
          return std::nullopt;
        }
        return args[++i];
      }
      return arg.substr(name.size() + 1);
    };
    const auto is_option = [&](std::string_view name) {
      return arg == name || (arg.size() > name.size() && arg.compare(0, name.size(), name) == 0 && arg[name.size()] == '=');
    };
    if (is_option("--config") || arg == "-c") {
      auto value = value_of(arg == "-c" ? "-c" : "--config");
      if (!value) return std::nullopt;
      line.config_path = *value;
    } else if (is_option("--log-level") || arg == "-l") {
      auto value = value_of(arg == "-l" ? "-l" : "--log-level");
      if (!value) return std::nullopt;
      line.log_level = logging::parse_level(*value);
      if (!line.log_level) {
        error = fmt::format("'{}' is not a log level: trace, debug, info, warn, error, critical or off", *value);
        return std::nullopt;
      }
    } else if (arg == "--dry-run") {
      line.dry_run = true;
    } else if (arg == "--online" && line.command == Command::check_config) {
      line.online = true;
    } else if (arg == "--json" && line.command == Command::status) {
      line.json = true;
    } else if (arg == "--rejected" && line.command == Command::retry) {
      line.retry_rejected = true;
    } else if (line.command == Command::retry && is_option("--product")) {
      line.retry_product = value_of("--product");
      if (!line.retry_product) return std::nullopt;
    } else if (line.command == Command::retry && is_option("--sku")) {
      line.retry_sku = value_of("--sku");
      if (!line.retry_sku) return std::nullopt;
    } else if (line.command == Command::resync && is_option("--since")) {
      line.resync_since = value_of("--since");
      if (!line.resync_since) return std::nullopt;
      if (!timestamps::parse_iso8601(*line.resync_since)) {
        error = fmt::format("--since '{}' is not a date-time (2026-03-01 or 2026-03-01T12:00:00Z)", *line.resync_since);
        return std::nullopt;
      }
    } else if (line.command == Command::resync && is_option("--job")) {
      line.resync_job = value_of("--job");
      if (!line.resync_job) return std::nullopt;
    } else if (!arg.empty() && arg.front() == '-') {
      error = fmt::format("unknown option '{}'", arg);
      return std::nullopt;
    } else if (command_seen && line.command == Command::backup && !line.backup_file) {
      line.backup_file = arg;
    } else if (command_seen && line.command == Command::retry && !line.retry_reference) {
      line.retry_reference = arg;
    } else if (command_seen) {
      error = fmt::format("unexpected argument '{}'", arg);
      return std::nullopt;
    } else if (const auto found = command_at(args, i)) {
      command_seen = true;
      line.command = found->first;
      i += found->second - 1;
    } else {
      error = fmt::format("unknown command '{}'", arg);
      return std::nullopt;
    }
  }
  if (line.command == Command::retry &&
      int{line.retry_reference.has_value()} + int{line.retry_product.has_value()} + int{line.retry_sku.has_value()} +
              int{line.retry_rejected} != 1) {
    error = "retry needs one of REFERENCE_ID, --product REFERENCE_ID, --sku SKU or --rejected";
    return std::nullopt;
  }
  if (line.command == Command::backup && !line.backup_file) {
    error = "backup needs a FILE to write the copy to";
    return std::nullopt;
  }
  if (line.command == Command::resync && !line.resync_since) {
    error = "resync needs --since DATE";
    return std::nullopt;
  }
  if (line.dry_run && line.command != Command::run && line.command != Command::once) {
    error = "--dry-run goes with run or once";
    return std::nullopt;
  }
  return line;
}

std::string usage_text() {
  std::string commands;
  for (const Subcommand& entry : kSubcommands) commands += entry.listing;
  return fmt::format(
      "Usage: fulfillsyncd [OPTIONS] [COMMAND]\n"
      "\n"
      "Synchronises a merchant's orders, returns, shipments, tracking and inventory lots with the\n"
      "fulfillment provider's API.\n"
      "\n"
      "Commands:\n"
      "{}"
      "Each command's own usage: fulfillsyncd COMMAND --help.\n"
      "\n"
      "Options:\n"
      "  -c, --config PATH      configuration file (default {})\n"
      "      --dry-run          with run or once: read the merchant's rows (and the catalog, with\n"
      "                         push_products on), build and validate every request, log them\n"
      "                         (personal data redacted); sends and writes nothing:\n"
      "                         the merchant database and the checkpoint store are only read, a missing\n"
      "                         store is not created, a missing merchant database exits 69\n"
      "  -l, --log-level LEVEL  trace, debug, info, warn, error, critical or off; overrides logging.level\n"
      "  -h, --help             show this help\n"
      "  -V, --version          show the version\n"
      "\n"
      "Exit status (sysexits; status has its own, as systemctl status):\n"
      "  0   success; once: all done; status: a daemon runs and no job is failing\n"
      "  1   status: a daemon runs, but a job is failing or paused, or the jobs wait for the provider\n"
      "  3   status: no daemon runs on this checkpoint store\n"
      "  64  usage error\n"
      "  65  once: done, but rows stay rejected or tracking marks are refused\n"
      "  69  a store or the metrics endpoint cannot be opened (the metrics address is in use, say);\n"
      "      once: the provider cannot be reached within api.retry, or a job failed api.retry.attempts\n"
      "      runs in a row\n"
      "  70  internal error\n"
      "  74  the checkpoint store is damaged: stop the daemon and run recover-store; systemd does not\n"
      "      restart on it\n"
      "  75  once: stopped with work left, by SIGTERM/SIGINT or because the provider refused the\n"
      "      credentials; the next start resumes it\n"
      "  78  configuration error: check-config found one, or the provider refused the token, has no\n"
      "      channel to create orders in, or its TLS certificate is not trusted (api.ca_file);\n"
      "      systemd does not restart on it\n"
      "\n"
      "FULFILLSYNC_FAILPOINTS=NAME[@N],... kills the process at a named step (tests only).\n",
      commands, kDefaultConfigPath);
}

std::string usage_text(Command command) {
  if (command == Command::help || command == Command::version) return usage_text();
  const Subcommand& entry = subcommand(command);
  std::string text = fmt::format("Usage: fulfillsyncd [OPTIONS] {}\n\n{}\n", entry.usage, entry.help);
  text += fmt::format(
      "Common options:\n"
      "  -c, --config PATH      configuration file (default {})\n"
      "  -l, --log-level LEVEL  trace, debug, info, warn, error, critical or off; overrides logging.level\n"
      "  -h, --help             show this help\n",
      kDefaultConfigPath);
  if (entry.help.find("Exit status") == std::string_view::npos) {
    text += "\nExit status: as fulfillsyncd --help lists.\n";
  }
  return text;
}

int main(int argc, char** argv) {
  // SQLite's memory statistics take a global mutex on every allocation it makes, and nothing here
  // reads them; set before any connection opens (afterwards the call is refused and changes nothing).
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  // A statement that changes many rows inside a transaction (a page of ledger transitions) keeps its
  // pages' old images in case it fails, in memory up to this size and then in a temporary file: at
  // SQLite's default of 64 KiB, a page of 100 keys spilled, a file created, written and deleted each time.
  sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, 1024 * 1024);
  const std::vector<std::string> args(argv + 1, argv + argc);
  std::string error;
  const auto line = parse_command_line(args, error);
  if (!line) {
    const auto command = named_command(args);
    std::cerr << "fulfillsyncd: " << error << "\n\n" << (command ? usage_text(*command) : usage_text());
    return exit_code::usage;
  }
  logging::init(logging::detect_destination(), line->log_level.value_or(spdlog::level::info));
  try {
    switch (line->command) {
      case Command::help:
        std::cout << (line->help_topic ? usage_text(*line->help_topic) : usage_text());
        return exit_code::ok;
      case Command::version: std::cout << "fulfillsyncd " << kVersion << '\n'; return exit_code::ok;
      case Command::check_config: return check_config(*line);
      case Command::run:
      case Command::once: return run(*line);
      case Command::status: return status(*line);
      case Command::retry: return retry(*line);
      case Command::resync: return resync_command(*line);
      case Command::auth_login: return login(*line);
      case Command::upgrade_source: return upgrade_source(*line);
      case Command::recover_store: return recover_store_command(*line);
      case Command::backup: return backup_command(*line);
    }
  } catch (const std::exception& e) {
    spdlog::critical("internal error: {}", e.what());
    return exit_code::software;
  }
  return exit_code::software;
}

}  // namespace fulfillsync::daemon
