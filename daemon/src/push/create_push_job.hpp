#pragma once
// push_orders and push_returns: the creates the intake queued, exactly once in effect (push_job.hpp).
#include <span>
#include <string>
#include <vector>

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
  // What the provider has of the creates sent with these references.
  boost::asio::awaitable<api::Answer<std::vector<RemoteRecord>>> find_created(std::span<const std::string> references);
  // Unclear creates by what their lookup found: adopted, or pending again with their rows read
  // again. False when the rows could not be read (nothing of it is kept).
  bool settle_unclear(std::span<const LedgerEntry> unclear, const std::vector<RemoteRecord>& found, JobRun& run);
  boost::asio::awaitable<void> send(JobRun& run);
  // POST /order or /return with `body`: what the answer says was created.
  boost::asio::awaitable<api::Answer<RemoteRecord>> create(std::string body, api::BeforeSend before_send);
  // The answer to a create that left. A create made is added to `created`, marked with the others
  // answered by the same commit.
  void record(const LedgerEntry& entry, const api::Answer<RemoteRecord>& answer, JobRun& run,
              std::vector<OutboundLedger::Created>& created);
  // An order create whose row asks for a cancel is never sent: both entries are withdrawn.
  bool withdraw_if_cancelled(const LedgerEntry& entry);
  std::string failpoint_name(std::string_view step) const;

  LedgerKind kind_;
  Intake& intake_of_rows_;
};

}  // namespace fulfillsync::daemon
