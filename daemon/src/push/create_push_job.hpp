#pragma once
// push_orders and push_returns: the creates the intake queued, exactly once in effect (push_job.hpp).
#include <span>
#include <string>

#include "push/push_job.hpp"

namespace fulfillsync::daemon {

// push_orders (LedgerKind::order_create) or push_returns (LedgerKind::return_create).
class CreatePushJob final : public PushJob {
 public:
  CreatePushJob(LedgerKind kind, PushContext context, config::JobConfig config, Intake& intake);
  std::string_view name() const override;
  boost::asio::awaitable<JobRun> run() override;
  int backlog() override;

 private:
  boost::asio::awaitable<void> reconcile(JobRun& run);
  boost::asio::awaitable<void> send(JobRun& run);
  // The answer to a create that left.
  void record(const LedgerEntry& entry, const api::Outcome& outcome, JobRun& run);
  // An order create whose row asks for a cancel is never sent: both entries are withdrawn.
  bool withdraw_if_cancelled(const LedgerEntry& entry);
  std::string failpoint_name(std::string_view step) const;

  LedgerKind kind_;
  Intake& intake_of_rows_;
};

}  // namespace fulfillsync::daemon
