#pragma once
// The running daemon: opens its stores, serves metrics, tells systemd how it is, and answers
// SIGTERM/SIGINT (graceful stop within service.shutdown_timeout) and SIGHUP (reload).
#include <deque>
#include <filesystem>
#include <memory>
#include <optional>

#include <signal.h>

#include <spdlog/common.h>

#include "fulfillsync/api/api_metrics.hpp"
#include "fulfillsync/api/client.hpp"
#include "fulfillsync/api/oauth.hpp"
#include "fulfillsync/api/token_source.hpp"
#include "fulfillsync/api/transport.hpp"
#include "fulfillsync/common/asio.hpp"
#include "fulfillsync/config/config.hpp"
#include "fulfillsync/daemon/job/sync_metrics.hpp"
#include "fulfillsync/daemon/push/source_intake.hpp"
#include "fulfillsync/daemon/service/sd_notify.hpp"
#include "fulfillsync/daemon/store/checkpoint_store.hpp"
#include "fulfillsync/daemon/store/outbound_ledger.hpp"
#include "fulfillsync/daemon/store/tracking_mark_ledger.hpp"
#include "fulfillsync/merchant/change_notifications.hpp"
#include "fulfillsync/merchant/merchant_database.hpp"
#include "push/result_writer.hpp"
#include "push/store_rebuild.hpp"
#include "service/merchant_database_metrics.hpp"
#include "service/metrics.hpp"
#include "service/progress_report.hpp"
#include "service/scheduler.hpp"
#include "store/checkpoint_token_store.hpp"

namespace fulfillsync::daemon {

class ProductPushJob;

class Service {
 public:
  enum class Mode {
    run,   // until a stop signal
    once,  // until every job has nothing left to do
    rebuild,  // `recover-store`: rebuild the store from the result tables, check it, print what was adopted
  };

  // Opens the checkpoint store and the merchant database and starts serving metrics. Throws
  // (CheckpointStoreError, MerchantDatabaseError, std::runtime_error) when any of them cannot start.
  // `log_level_override` is --log-level, which wins over the file at every reload.
  Service(std::filesystem::path config_path, config::Config config,
          std::optional<spdlog::level::level_enum> log_level_override, Mode mode = Mode::run);
  ~Service();

  // Runs until a stop signal (or, once, until no backlog is left) and the graceful stop after it.
  // Returns the process exit code.
  int run();

  // What `once` summarises once run() returns (cli.cpp): the store and the ledger it ran on.
  CheckpointStore& checkpoint() { return *checkpoint_; }
  OutboundLedger& ledger() { return *ledger_; }

 private:
  // Before the checkpoint store's integrity check at opening, and before it is migrated from schema
  // version `from` to `to`: each tells systemd the start will take longer, in proportion to the store.
  void announce_integrity_check();
  void announce_migration(int from, int to);
  // The store's size with its write-ahead log, in GiB; 0 where it cannot be read (or is not made yet).
  double checkpoint_store_gib() const;
  void extend_start(std::chrono::seconds allowed, std::string_view status);
  boost::asio::awaitable<void> handle_signals();
  // Marks the loop's progress every beat_interval(): pets systemd's watchdog and feeds /healthz.
  boost::asio::awaitable<void> heartbeat();
  std::chrono::steady_clock::duration beat_interval() const;
  Probe health() const;
  // Configuration loaded, checkpoint store open, merchant database reachable, not stopping.
  Probe readiness();
  boost::asio::awaitable<void> stop_gracefully();
  // Finds the channel for creating calls; fatal (exit 78) when the token, the configured channel or
  // the provider's certificate cannot work. While the provider cannot be reached, `run` asks again
  // with growing pauses; `once` ends (exit 69) once the client's retries (api.retry) are spent.
  boost::asio::awaitable<void> connect_to_provider();
  std::string provider_unreachable(const std::string& detail) const;
  void add_push_jobs();
  // `since`: the starting point (ISO 8601); nothing older is pulled.
  void add_pull_jobs(const std::string& since);
  // The client a job calls the provider with: client_, with the answers noted under the job's name
  // for `fulfillsyncd status`.
  api::ApiClient& client_for(std::string_view job);
  // Notes in the checkpoint store what the jobs wait for (nothing: they run), for `status`.
  void note_waiting(const std::optional<std::string>& what);
  boost::asio::awaitable<void> run_jobs_once();
  // Ends `recover-store` once the rebuild is checked: the results written, what was adopted printed.
  void end_rebuild();
  // Ends `once`: prints the summary on stdout, `why` on the log, and sets the exit code.
  void end_once(int code, const std::string& why);
  boost::asio::awaitable<void> report_progress();
  boost::asio::awaitable<void> wake_on_changes();
  // PostgreSQL read by updated_at: the age of the oldest open transaction, looked at every while.
  boost::asio::awaitable<void> watch_open_transactions();
  void reload();
  void apply(const config::Config& config);
  std::string status_line() const;

  boost::asio::io_context io_;
  // Installed first, so that a signal arriving while the stores open is held, not fatal.
  boost::asio::signal_set signals_{io_, SIGTERM, SIGINT, SIGHUP};
  std::filesystem::path config_path_;
  config::Config config_;
  std::optional<spdlog::level::level_enum> log_level_override_;
  Notifier notifier_;
  Metrics metrics_;
  std::uint16_t metrics_port_ = 0;
  std::chrono::steady_clock::time_point last_beat_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point merchant_checked_{};
  std::string merchant_problem_;  // the last probe's, empty when the merchant database answered
  std::unique_ptr<CheckpointStore> checkpoint_;
  // PostgreSQL: told of the merchant database's failures, so declared before it (outlives it).
  std::unique_ptr<MerchantDatabaseMetrics> merchant_metrics_;
  std::unique_ptr<merchant::MerchantDatabase> merchant_;
  std::unique_ptr<api::Transport> transport_;
  std::unique_ptr<api::ApiMetrics> api_metrics_;
  std::unique_ptr<api::Transport> auth_transport_;  // the OAuth server, when api.oauth is set
  std::unique_ptr<api::TokenStore> token_store_;
  std::unique_ptr<api::TokenSource> tokens_;
  std::unique_ptr<api::ApiClient> client_;
  std::deque<api::ApiClient> job_clients_;  // client_for(); outlive the jobs
  std::unique_ptr<OutboundLedger> ledger_;
  std::unique_ptr<TrackingMarkLedger> marks_;
  std::unique_ptr<SyncMetrics> sync_metrics_;
  std::unique_ptr<ResultWriter> results_;
  std::unique_ptr<StoreRebuild> rebuild_;
  std::unique_ptr<SourceIntake<merchant::OrderRow>> order_intake_;
  std::unique_ptr<SourceIntake<merchant::ReturnRow>> return_intake_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<ProgressReport> progress_;
  // `run` with a database that notifies its changes (PostgreSQL); destroyed before io_, once it stopped.
  std::unique_ptr<merchant::ChangeNotifications> changes_;
  ProductPushJob* products_job_ = nullptr;  // the scheduler's, where push_products is on
  Mode mode_;
  bool stopping_ = false;
  std::optional<int> exit_code_;  // set when the run's end is known; else 0 (run) or 75 (once)
  // Job runs under way: a stop waits for them (up to the deadline).
  int in_flight_ = 0;
};

}  // namespace fulfillsync::daemon
