#include "service/service.hpp"

#include <signal.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdio>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "fulfillsync/api/channel_selection.hpp"
#include "fulfillsync/api/oauth.hpp"
#include "fulfillsync/common/printable.hpp"
#include "fulfillsync/common/doubling.hpp"
#include "fulfillsync/config/duration.hpp"
#include "fulfillsync/config/loader.hpp"
#include "fulfillsync/daemon/exit_codes.hpp"
#include "fulfillsync/daemon/store/daemon_record.hpp"
#include "pull/mark_tracking.hpp"
#include "pull/pull_lots.hpp"
#include "pull/pull_stock.hpp"
#include "pull/pull_returns.hpp"
#include "pull/pull_shipments.hpp"
#include "push/cancel_push_job.hpp"
#include "push/create_push_job.hpp"
#include "push/product_push_job.hpp"
#include "push/source_time_zone.hpp"

namespace fulfillsync::daemon {
namespace asio = boost::asio;
using namespace std::chrono_literals;

Service::Service(std::filesystem::path config_path, config::Config config,
                 std::optional<spdlog::level::level_enum> log_level_override, Mode mode)
    : config_path_(std::move(config_path)),
      config_(std::move(config)),
      log_level_override_(log_level_override),
      notifier_(Notifier::from_environment()),
      mode_(mode) {
  apply(config_);
  announce_integrity_check();
  checkpoint_ = std::make_unique<CheckpointStore>(config_.checkpoint.path, CheckpointStore::Access::exclusive,
                                                  [&](int from, int to) { announce_migration(from, to); });
  spdlog::info("checkpoint store {} at schema version {}", checkpoint_->path().string(), checkpoint_->schema_version());
  merchant_ = merchant::open_merchant_database(config_.merchant);
  spdlog::info("merchant database: {}", merchant_->describe());
  if (config_.merchant.driver == config::MerchantDriver::postgresql) {
    merchant_metrics_ = std::make_unique<MerchantDatabaseMetrics>(metrics_.registry());
    merchant_->observe_failures(*merchant_metrics_);
  }
  if (config_.metrics.enabled) {
    metrics_port_ = metrics_.serve(
        config_.metrics, io_.get_executor(), [this] { return health(); }, [this] { return readiness(); });
    spdlog::info("metrics listening on {}:{}", config_.metrics.host, metrics_port_);
  }
  metrics_.record_config_load(true);

  const auto base = api::parse_base_url(config_.api.base_url);
  if (!base) throw std::runtime_error("api.base_url " + config_.api.base_url + " is not a URL");
  transport_ = std::make_unique<api::Transport>(
      io_.get_executor(),
      api::TransportOptions{*base, config_.api.ca_file, config_.api.connect_timeout, config_.api.request_timeout,
                            static_cast<std::size_t>(config_.api.pool_size)});
  api_metrics_ = std::make_unique<api::ApiMetrics>(metrics_.registry());
  if (const auto& oauth = config_.api.oauth) {
    const auto auth_base = api::parse_base_url(oauth->auth_url);
    if (!auth_base) throw std::runtime_error("api.oauth.auth_url " + oauth->auth_url + " is not a URL");
    auth_transport_ = std::make_unique<api::Transport>(
        io_.get_executor(), api::TransportOptions{*auth_base, config_.api.ca_file, config_.api.connect_timeout,
                                                  config_.api.request_timeout, 1});
    token_store_ = std::make_unique<CheckpointTokenStore>(*checkpoint_);
    tokens_ = std::make_unique<api::OAuthTokenSource>(
        *auth_transport_,
        api::OAuthOptions{oauth->auth_url, oauth->client_id, api::read_token_file(oauth->client_secret_file),
                          oauth->redirect_uri, oauth->scopes},
        *token_store_, *api_metrics_);
  } else {
    tokens_ = std::make_unique<api::PersonalAccessToken>(config_.api.token_file);
  }
  client_ = std::make_unique<api::ApiClient>(
      io_.get_executor(), *transport_, *tokens_, *api_metrics_,
      api::ClientOptions{config_.api.version, config_.api.requests_per_minute,
                         api::RetryPolicy{config_.api.retry.base, config_.api.retry.cap, config_.api.retry.attempts}});

  ledger_ = std::make_unique<OutboundLedger>(*checkpoint_);
  if (const int interrupted = ledger_->recover_interrupted(); interrupted > 0) {
    spdlog::warn("{} sends were interrupted by the last stop; they are looked up at the provider before any new send",
                 interrupted);
  }
  marks_ = std::make_unique<TrackingMarkLedger>(*checkpoint_);
  if (const int interrupted = marks_->recover_interrupted(); interrupted > 0) {
    spdlog::warn("{} tracking marks were interrupted by the last stop; they are looked up at the provider before "
                 "any new mark",
                 interrupted);
  }
  sync_metrics_ = std::make_unique<SyncMetrics>(metrics_.registry());
  results_ = std::make_unique<ResultWriter>(*ledger_, merchant_->results(), *sync_metrics_);
  // Before the intake reads the starting point: a lost or older store learns what was created.
  const auto version = api::parse_api_version(config_.api.version);
  assert(version && "the loader accepts only known versions");
  std::optional<StoreRebuild::Catalog> catalog;
  if (config_.sync.push_products.enabled) {
    catalog.emplace(StoreRebuild::Catalog{merchant_->source(), merchant_->pulled(), *version});
  }
  rebuild_ = std::make_unique<StoreRebuild>(merchant_->results(), *checkpoint_, *ledger_, catalog);
  rebuild_->adopt(config_.sync.orders_since);
  const std::string since = starting_point(*checkpoint_, config_.sync.orders_since);
  adopt_source_time_zone(*checkpoint_, config_.merchant.timezone);
  const merchant::ChangeFeed<merchant::OrderRow>::Options feed{
      config_.merchant.look_back, static_cast<std::size_t>(config_.merchant.batch_size),
      config_.merchant.max_clock_skew};
  // Return lines and order lines naming a SKU are resolved through the map pull_stock keeps.
  const auto sku_map = [&pulled = merchant_->pulled()](std::span<const std::string> skus) {
    return pulled.sku_map(skus);
  };
  order_intake_ = std::make_unique<SourceIntake<merchant::OrderRow>>(
      merchant_->source(), *checkpoint_, *ledger_, *sync_metrics_,
      SourceIntake<merchant::OrderRow>::Options{feed, *version, since, config_.merchant.reconcile_interval, sku_map});
  return_intake_ = std::make_unique<SourceIntake<merchant::ReturnRow>>(
      merchant_->source(), *checkpoint_, *ledger_, *sync_metrics_,
      SourceIntake<merchant::ReturnRow>::Options{{feed.look_back, feed.batch_size, feed.max_clock_skew}, *version,
                                                 since, config_.merchant.reconcile_interval, sku_map});
  scheduler_ = std::make_unique<Scheduler>(io_.get_executor(), *sync_metrics_, stopping_, in_flight_);
  add_push_jobs();
  add_pull_jobs(since);
  progress_ = std::make_unique<ProgressReport>(*scheduler_, *checkpoint_, *ledger_, *marks_, *sync_metrics_,
                                               config_.api.requests_per_minute);
  progress_->export_figures();
  // Only a daemon that goes on runs its jobs at intervals that a notification can cut short.
  if (mode_ == Mode::run) changes_ = merchant::listen_for_changes(config_.merchant, io_.get_executor());
  if (changes_) sync_metrics_->export_merchant_listener();
  record_daemon_start(*checkpoint_);
}

void Service::add_push_jobs() {
  const auto version = *api::parse_api_version(config_.api.version);
  const auto context_for = [&](std::string_view job) {
    return PushContext{client_for(job), *ledger_, *results_, *sync_metrics_, version, stopping_,
                       config_.api.request_timeout};
  };
  const auto& sync = config_.sync;
  // Before the orders: in a run, a new SKU reaches the provider as a product before its orders do.
  if (sync.push_products.enabled) {
    auto products = std::make_unique<ProductPushJob>(context_for("push_products"), sync.push_products,
                                                     merchant_->source());
    products_job_ = products.get();
    scheduler_->add(std::move(products), sync.push_products.interval);
  }
  if (sync.push_orders.enabled) {
    scheduler_->add(std::make_unique<CreatePushJob>(LedgerKind::order_create, context_for("push_orders"),
                                                    sync.push_orders, *order_intake_),
                    sync.push_orders.interval);
  }
  if (sync.push_cancels.enabled) {
    // One job reads the orders table: push_orders when it runs, so that its backpressure holds.
    Intake* const orders = sync.push_orders.enabled ? nullptr : order_intake_.get();
    scheduler_->add(std::make_unique<CancelPushJob>(context_for("push_cancels"), sync.push_cancels, orders,
                                                    merchant_->results()),
                    sync.push_cancels.interval);
  }
  if (sync.push_returns.enabled) {
    scheduler_->add(std::make_unique<CreatePushJob>(LedgerKind::return_create, context_for("push_returns"),
                                                    sync.push_returns, *return_intake_),
                    sync.push_returns.interval);
  }
}

void Service::add_pull_jobs(const std::string& since) {
  const auto version = *api::parse_api_version(config_.api.version);
  const auto starting_point = timestamps::parse_iso8601(since);
  assert(starting_point && "the starting point is saved in ISO 8601");
  const auto context_for = [&](std::string_view job) {
    return PullContext{client_for(job), merchant_->pulled(), *checkpoint_,     *sync_metrics_,
                       version,          stopping_,           *starting_point, config_.api.request_timeout};
  };
  const auto& sync = config_.sync;
  if (sync.pull_shipments.enabled) {
    scheduler_->add(std::make_unique<PullShipmentsJob>(context_for("pull_shipments"), sync.pull_shipments), sync.pull_shipments.interval);
  }
  if (sync.mark_tracking.mode != config::TrackingMarkMode::never) {
    config::TrackingMarksConfig marks = sync.mark_tracking;
    if (mode_ == Mode::once) marks.batch_wait = config::Duration(0);  // nothing more arrives before it ends
    scheduler_->add(std::make_unique<MarkTrackingJob>(context_for("mark_tracking"), *marks_, marks), marks.interval);
  }
  if (sync.pull_returns.enabled) {
    scheduler_->add(std::make_unique<PullReturnsJob>(context_for("pull_returns"), sync.pull_returns), sync.pull_returns.interval);
  }
  if (sync.pull_lots.enabled) {
    // The job spaces its own reads across the interval; the scheduler only wakes it.
    scheduler_->add(std::make_unique<PullLotsJob>(context_for("pull_lots"), sync.pull_lots, mode_ != Mode::once), 1s);
  }
  if (sync.pull_stock.enabled) {
    // The job waits out its own interval between passes; the scheduler only wakes it.
    scheduler_->add(std::make_unique<PullStockJob>(context_for("pull_stock"), sync.pull_stock, mode_ != Mode::once),
                    1s);
  }
}

api::ApiClient& Service::client_for(std::string_view job) {
  return job_clients_.emplace_back(client_->for_caller(scheduler_->answer_log(job)));
}

void Service::announce_integrity_check() {
  // PRAGMA quick_check reads every page of the store at each start: 23 s for 342 MB, about a minute
  // per GiB, when the file is not in the page cache (after a reboot, on a virtual machine's disk).
  // Past TimeoutStartSec (90 s by default) systemd would stop every start at the same place.
  const double gib = checkpoint_store_gib();
  if (gib >= 0.25) {
    spdlog::info("checkpoint store {}: checking its integrity ({:.2f} GiB; about a minute per GiB not yet cached)",
                 config_.checkpoint.path.string(), gib);
  }
  extend_start(std::chrono::seconds(60) + std::chrono::seconds(static_cast<std::int64_t>(gib * 180)),
               "Checking the checkpoint store's integrity");
}

void Service::announce_migration(int from, int to) {
  // A migration that rebuilds the ledger copies every entry with its body: about half a minute per
  // GiB of store on a virtual machine's disk (bench/README.md, "The ledgers' constraints").
  const double gib = checkpoint_store_gib();
  spdlog::info("checkpoint store {}: migrating from schema version {} to {} ({:.2f} GiB; a rebuilt ledger takes "
               "about half a minute per GiB)",
               config_.checkpoint.path.string(), from, to, gib);
  extend_start(std::chrono::seconds(120) + std::chrono::seconds(static_cast<std::int64_t>(gib * 240)),
               fmt::format("Migrating the checkpoint store to schema version {}", to));
}

double Service::checkpoint_store_gib() const {
  std::uintmax_t bytes = 0;
  for (const auto& file : {config_.checkpoint.path, std::filesystem::path(config_.checkpoint.path.string() + "-wal")}) {
    std::error_code unreadable;  // a missing write-ahead log, or a store not created yet
    const auto size = std::filesystem::file_size(file, unreadable);
    if (!unreadable) bytes += size;
  }
  constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;
  return static_cast<double>(bytes) / kBytesPerGiB;
}

void Service::extend_start(std::chrono::seconds allowed, std::string_view status) {
  // systemd counts the extension from this message, and never shortens the start's own limit with it.
  notifier_.notify(fmt::format("EXTEND_TIMEOUT_USEC={}\nSTATUS={}",
                               std::chrono::duration_cast<std::chrono::microseconds>(allowed).count(), status));
}

Service::~Service() = default;

int Service::run() {
  asio::co_spawn(io_, handle_signals(), asio::detached);
  asio::co_spawn(io_, connect_to_provider(), asio::detached);
  // From the start, not once the provider answers: a daemon that cannot reach it still exports its
  // backlog, lag and oldest waiting entry as they grow.
  if (mode_ != Mode::once) asio::co_spawn(io_, report_progress(), asio::detached);
  last_beat_ = std::chrono::steady_clock::now();  // opening the stores may have taken a while
  asio::co_spawn(io_, heartbeat(), asio::detached);
  if (changes_) asio::co_spawn(io_, wake_on_changes(), asio::detached);
  if (merchant_metrics_ && mode_ == Mode::run) asio::co_spawn(io_, watch_open_transactions(), asio::detached);
  notifier_.notify("READY=1\nSTATUS=" + status_line());
  spdlog::info("fulfillsyncd ready ({})", config_path_.string());
  io_.run();
  if (mode_ != Mode::run && !exit_code_) {
    end_once(exit_code::temporary_failure, "stopped by a signal before the work was done; the next start resumes it");
  }
  try {
    record_daemon_stop(*checkpoint_);
  } catch (const std::exception& e) {
    spdlog::warn("cannot note the stop in the checkpoint store: {}", e.what());
  }
  spdlog::info("fulfillsyncd stopped");
  return exit_code_.value_or(exit_code::ok);
}

asio::awaitable<void> Service::connect_to_provider() {
  // The provider is asked again after 1 s, doubling to a minute.
  constexpr Doubling kFirstContact{1s, 60s};
  std::chrono::milliseconds wait = kFirstContact.after(1);
  asio::steady_timer timer(io_);
  while (!stopping_) {
    const api::ChannelSelection selection = co_await api::select_channel(*client_, config_.api.channel_id);
    if (selection.status == api::ChannelSelection::Status::selected) {
      spdlog::info("provider {}: {}", config_.api.base_url, selection.message);
      note_waiting(std::nullopt);
      if (sync_metrics_->set_provider_reachable(true)) spdlog::info("the provider answers again");
      if (stopping_) co_return;
      const auto version = *api::parse_api_version(config_.api.version);
      co_await rebuild_->check(*client_, version, stopping_, config_.api.request_timeout);
      if (stopping_) co_return;
      if (mode_ == Mode::rebuild) {
        end_rebuild();
        asio::co_spawn(io_, stop_gracefully(), asio::detached);
      } else if (mode_ == Mode::once) {
        asio::co_spawn(io_, run_jobs_once(), asio::detached);
      } else {
        scheduler_->start();
      }
      co_return;
    }
    if (!selection.transient()) {
      // An operator has to act (the token, the channel, the certificate); systemd does not restart on 78.
      if (mode_ != Mode::run) {
        end_once(exit_code::config, "cannot start: " + selection.message);
      } else {
        spdlog::critical("cannot start: {}", selection.message);
        exit_code_ = exit_code::config;
      }
      if (!stopping_) asio::co_spawn(io_, stop_gracefully(), asio::detached);
      co_return;
    }
    sync_metrics_->set_provider_reachable(false);
    note_waiting(fmt::format("the provider's first answer ({}); the jobs start once it answers", selection.message));
    if (mode_ != Mode::run) {
      // The client has tried as often as api.retry allows: a run that must end does not wait longer.
      end_once(exit_code::unavailable, provider_unreachable(selection.message));
      if (!stopping_) asio::co_spawn(io_, stop_gracefully(), asio::detached);
      co_return;
    }
    spdlog::error("{}; asking again in {} (fulfillsync_provider_reachable is 0)", selection.message,
                  config::format_duration(wait));
    timer.expires_after(wait);
    co_await timer.async_wait(asio::use_awaitable);
    wait = kFirstContact.next(wait);
  }
}

void Service::note_waiting(const std::optional<std::string>& what) {
  try {
    record_daemon_waiting(*checkpoint_, what);
  } catch (const std::exception& e) {
    spdlog::warn("cannot note in the checkpoint store what the daemon waits for: {}", e.what());
  }
}

std::string Service::provider_unreachable(const std::string& detail) const {
  const auto& retry = config_.api.retry;
  return fmt::format("the provider cannot be reached: {} (after {} attempts, api.retry: base {}, cap {}); check "
                     "api.base_url, the network and the provider's status",
                     detail, retry.attempts, config::format_duration(retry.base), config::format_duration(retry.cap));
}

asio::awaitable<void> Service::run_jobs_once() {
  const Scheduler::Idle idle = co_await scheduler_->run_until_idle(config_.api.retry.attempts);
  switch (idle) {
    case Scheduler::Idle::stopped: co_return;  // run() ends it once the graceful stop is over
    case Scheduler::Idle::done: {
      // A run reads a batch and sends it, so the change log's entries of the last one wait for a
      // poll after its sends' synced commit: in a daemon the next quiet one, which `once` ends before.
      // An intake no job polled owes nothing, and tidies nothing.
      order_intake_->tidy();
      return_intake_->tidy();
      int rejected = 0;
      for (const auto& [key, count] : ledger_->backlog()) {
        if (key.second == LedgerState::rejected) rejected += count;
      }
      if (rejected > 0 || marks_->failing() > 0) {
        end_once(exit_code::data_error, "done; some rows stay rejected or tracking marks refused (see above)");
      } else {
        end_once(exit_code::ok, "");
      }
      break;
    }
    case Scheduler::Idle::paused:
      if (const auto& refused = transport_->refused_certificate()) {
        end_once(exit_code::config, "stopped with work left: " + *refused);
      } else {
        end_once(exit_code::temporary_failure, "stopped with work left: the provider refused the credentials");
      }
      break;
    case Scheduler::Idle::failing: {
      std::string why = fmt::format("stopped with work left: {} failed {} runs in a row", scheduler_->failing_job(),
                                    config_.api.retry.attempts);
      if (!scheduler_->failing_error().empty()) {
        why += ": " + scheduler_->failing_error();
      } else if (!sync_metrics_->provider_reachable()) {
        why += "; " + provider_unreachable("no answer");
      } else {
        why += " (the log above says why)";
      }
      end_once(exit_code::unavailable, why);
      break;
    }
  }
  if (!stopping_) asio::co_spawn(io_, stop_gracefully(), asio::detached);
}

void Service::end_rebuild() {
  const bool written = results_->flush(merchant::SourceKind::orders, "recover-store", 1 << 30) &&
                       results_->flush(merchant::SourceKind::returns, "recover-store", 1 << 30) &&
                       results_->flush(merchant::SourceKind::products, "recover-store", 1 << 30);
  std::fputs((rebuild_->summary().describe() + '\n').c_str(), stdout);
  std::fflush(stdout);
  // Unwritten results are replayed by the next start; the ledger is what counts.
  if (!written) spdlog::warn("some result rows could not be written; the next start writes them");
  exit_code_ = exit_code::ok;
}

void Service::end_once(int code, const std::string& why) {
  exit_code_ = code;
  try {
    progress_->report(std::chrono::steady_clock::duration::zero());
  } catch (const std::exception& e) {
    spdlog::error("cannot report the run's progress: {}", e.what());
  }
  if (why.empty()) return;
  if (code == exit_code::data_error) {
    spdlog::warn("{} (exit {})", why, code);
  } else {
    spdlog::error("{} (exit {})", why, code);
  }
}

asio::awaitable<void> Service::report_progress() {
  asio::steady_timer timer(io_);
  auto last = std::chrono::steady_clock::now();
  while (!stopping_) {
    timer.expires_after(config_.sync.progress_interval);
    boost::system::error_code ignored;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    if (stopping_) break;
    const auto now = std::chrono::steady_clock::now();
    try {
      progress_->report(now - last);
      notifier_.notify("STATUS=" + status_line());
    } catch (const std::exception& e) {
      spdlog::warn("progress report: {}", e.what());
    }
    last = now;
  }
}

asio::awaitable<void> Service::wake_on_changes() {
  // The jobs that read the source tables. push_products only while it reads what changed: a
  // notification does not say which table changed, and without the catalog's change order a run
  // compares the whole catalog (its interval paces that).
  static constexpr std::array<std::string_view, 4> kReaders = {"push_orders", "push_cancels", "push_returns",
                                                               "push_products"};
  const auto wake_readers = [&] {
    const bool products = products_job_ != nullptr && products_job_->follows_changes();
    scheduler_->wake(std::span(kReaders).first(products ? 4 : 3));
  };
  bool listened = false;
  while (!stopping_) {
    const auto event = co_await changes_->next();
    if (stopping_) co_return;
    switch (event) {
      case merchant::ChangeNotifications::Event::lost: sync_metrics_->set_merchant_listener_up(false); break;
      case merchant::ChangeNotifications::Event::listening:
        sync_metrics_->set_merchant_listener_up(true);
        if (listened) sync_metrics_->count_merchant_listener_reconnect();
        listened = true;
        // The server answers: the jobs' connection need not wait out its back-off to open again.
        merchant_->reopen_without_delay();
        // What changed while nobody listened went unheard.
        wake_readers();
        break;
      case merchant::ChangeNotifications::Event::changed: wake_readers(); break;
    }
  }
}

asio::awaitable<void> Service::watch_open_transactions() {
  // Often enough to see a transaction outlast look_back while it is still open.
  const config::Duration period = std::clamp<config::Duration>(config_.merchant.look_back / 2, 1s, 15s);
  asio::steady_timer timer(io_);
  while (!stopping_) {
    try {
      // Read by transaction id (change_xid), a late commit is found whatever its length.
      const auto oldest =
          merchant_->source().has_change_log() ? std::nullopt : merchant_->oldest_open_transaction();
      if (oldest) {
        merchant_metrics_->note_oldest_transaction(*oldest, config_.merchant.look_back);
      } else {
        merchant_metrics_->forget_oldest_transaction();
      }
    } catch (const merchant::MerchantDatabaseError& e) {
      // Counted as the database's failure; the jobs log it as they meet it.
      spdlog::debug("merchant database: cannot read the oldest open transaction: {}", e.what());
      merchant_metrics_->forget_oldest_transaction();
    }
    timer.expires_after(period);
    boost::system::error_code ignored;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
}

asio::awaitable<void> Service::handle_signals() {
  for (;;) {
    const int signal = co_await signals_.async_wait(asio::use_awaitable);
    if (signal == SIGHUP) {
      if (!stopping_) reload();
      continue;
    }
    if (stopping_) {
      spdlog::warn("second stop signal: exiting without waiting for in-flight work");
      io_.stop();
      co_return;
    }
    spdlog::info("received {}: stopping", signal == SIGTERM ? "SIGTERM" : "SIGINT");
    asio::co_spawn(io_, stop_gracefully(), asio::detached);
  }
}

asio::awaitable<void> Service::stop_gracefully() {
  stopping_ = true;
  notifier_.notify("STOPPING=1\nSTATUS=Stopping");
  const auto deadline = std::chrono::steady_clock::now() + config_.service.shutdown_timeout;
  asio::steady_timer poll(io_);
  while (in_flight_ > 0 && std::chrono::steady_clock::now() < deadline) {
    poll.expires_after(50ms);
    co_await poll.async_wait(asio::use_awaitable);
  }
  if (in_flight_ > 0) {
    spdlog::warn("shutdown timeout ({}) reached with {} requests in flight; the ledger resumes them at next start",
                 config::format_duration(config_.service.shutdown_timeout), in_flight_);
  }
  io_.stop();
}

asio::awaitable<void> Service::heartbeat() {
  // Beating from the event loop itself is the point: a loop that hangs stops the pings, systemd
  // restarts the service, and /healthz says so to any other supervisor.
  const auto watchdog = notifier_.watchdog_interval();
  asio::steady_timer timer(io_);
  for (;;) {
    last_beat_ = std::chrono::steady_clock::now();
    if (watchdog) notifier_.notify("WATCHDOG=1");
    timer.expires_after(beat_interval());
    co_await timer.async_wait(asio::use_awaitable);
  }
}

std::chrono::steady_clock::duration Service::beat_interval() const {
  const auto watchdog = notifier_.watchdog_interval();
  return watchdog ? std::min<std::chrono::steady_clock::duration>(*watchdog, 1s) : 1s;
}

Probe Service::health() const {
  Probe probe;
  // Missing two beats in a row is what systemd's watchdog (WatchdogSec, twice the ping interval) acts on.
  const auto since = std::chrono::steady_clock::now() - last_beat_;
  if (since > 2 * beat_interval()) {
    probe.problems.push_back(fmt::format(
        "event loop: no progress for {} ms",
        std::chrono::duration_cast<std::chrono::milliseconds>(since).count()));
  }
  return probe;
}

Probe Service::readiness() {
  Probe probe;
  if (stopping_) probe.problems.emplace_back("stopping");
  if (!checkpoint_) probe.problems.emplace_back("checkpoint store: not open");
  // A fresh connection, as a restart would make: the open one keeps working on a file that was moved away. Asked
  // at most once a second, however often probes come.
  const auto now = std::chrono::steady_clock::now();
  if (now - merchant_checked_ >= 1s) {
    merchant_checked_ = now;
    merchant_problem_.clear();
    try {
      merchant::open_merchant_database_read_only(config_.merchant)->ping();
    } catch (const std::exception& e) {
      merchant_problem_ = text::printable(e.what());
    }
  }
  if (!merchant_problem_.empty()) probe.problems.push_back(merchant_problem_);  // names the database itself
  return probe;
}

void Service::reload() {
  const auto monotonic_usec =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch());
  notifier_.notify(fmt::format("RELOADING=1\nMONOTONIC_USEC={}", monotonic_usec.count()));
  spdlog::info("received SIGHUP: reloading {}", config_path_.string());
  try {
    metrics_.reload_tls();
  } catch (const std::exception& e) {
    spdlog::error("reload: {}; the endpoint keeps the certificate it had", e.what());
  }
  try {
    config::Config fresh = config::load_file(config_path_);
    const auto needs_restart = [&](const char* section, bool changed) {
      if (changed) spdlog::warn("reload: changes to '{}' take effect at the next restart", section);
    };
    needs_restart("checkpoint", !(fresh.checkpoint == config_.checkpoint));
    needs_restart("merchant", !(fresh.merchant == config_.merchant));
    needs_restart("api", !(fresh.api == config_.api));
    needs_restart("metrics", !(fresh.metrics == config_.metrics));
    needs_restart("sync", !(fresh.sync == config_.sync));
    // Sections read at start stay as they were, so what runs matches what the log says.
    fresh.checkpoint = config_.checkpoint;
    fresh.merchant = config_.merchant;
    fresh.api = config_.api;
    fresh.metrics = config_.metrics;
    fresh.sync = config_.sync;
    apply(fresh);
    config_ = std::move(fresh);
    metrics_.record_config_load(true);
    spdlog::info("configuration reloaded");
  } catch (const config::ConfigError& error) {
    for (const auto& diagnostic : error.diagnostics()) spdlog::error("{}", diagnostic.to_string());
    spdlog::error("reload failed: keeping the running configuration");
    metrics_.record_config_load(false);
  }
  notifier_.notify("READY=1\nSTATUS=" + status_line());
}

void Service::apply(const config::Config& config) {
  spdlog::set_level(log_level_override_.value_or(config.logging.level));
}

std::string Service::status_line() const {
  std::string status = progress_ && !progress_->status().empty() ? progress_->status() : "Running";
  if (metrics_port_ != 0) status += fmt::format("; metrics on {}:{}", config_.metrics.host, metrics_port_);
  return status;
}

}  // namespace fulfillsync::daemon
