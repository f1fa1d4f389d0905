#pragma once
// pull_stock keeps the SKU map (`{prefix}variant_sync`): a pass over the provider's whole product
// list (GET /product, a cursor page of products with their variants), one page per run, each page's
// SKUs with their product, variant and inventory ids and stock on hand written in one transaction.
// The link of the next page is saved once the page is committed, so a restart resumes the pass
// after the last page written (a crash repeats a page, never skips one). A whole pass removes the
// SKUs the provider no longer lists. A pass starts every interval.
#include <chrono>
#include <optional>
#include <string>

#include "fulfillsync/api/provider.hpp"
#include "fulfillsync/config/config.hpp"
#include "fulfillsync/daemon/job/failure_backoff.hpp"
#include "fulfillsync/daemon/job/job.hpp"
#include "pull/pull_context.hpp"

namespace fulfillsync::daemon {

class PullStockJob final : public Job {
 public:
  // `repeat`: a pass every interval (the daemon); without, one pass (`once`).
  PullStockJob(PullContext context, config::StockConfig config, bool repeat);
  std::string_view name() const override { return "pull_stock"; }
  bool pulls() const override { return true; }
  bool paces_itself() const override { return true; }
  boost::asio::awaitable<JobRun> run() override;
  // `once`: 1 until its pass is done; the daemon: 1 after a page failed, until one is written.
  int backlog() override;
  bool paused() const override { return backoff_.paused(); }
  std::optional<std::chrono::system_clock::time_point> data_as_of() const override { return data_as_of_; }

 private:
  // Where the pass stands, as the checkpoint store keeps it.
  struct Pass {
    timestamps::TimePoint started{};
    std::string next_link{};  // the page to read next; empty: from the first page (or done)
    bool done = false;
  };
  std::optional<Pass> saved_pass();
  void save(const Pass& pass);
  boost::asio::awaitable<JobRun> read_page(Pass pass);

  PullContext context_;
  api::Provider provider_;
  config::StockConfig config_;
  bool repeat_;
  FailureBackoff backoff_;
  bool passed_ = false;  // a pass ended in this process
  bool failed_ = false;  // the last page read failed
  std::optional<std::chrono::system_clock::time_point> data_as_of_;
};

}  // namespace fulfillsync::daemon
