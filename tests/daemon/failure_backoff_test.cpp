#include "fulfillsync/daemon/job/failure_backoff.hpp"

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "fulfillsync/daemon/job/job.hpp"
#include "fulfillsync/daemon/job/sync_metrics.hpp"

namespace fulfillsync::daemon {
namespace {

using namespace std::chrono_literals;
using api::OutcomeKind;

api::Outcome outcome(OutcomeKind kind, int status = 0, std::string detail = "", bool certificate_refused = false) {
  api::Outcome out;
  out.kind = kind;
  out.status = status;
  out.detail = std::move(detail);
  out.certificate_refused = certificate_refused;
  return out;
}

class FailureBackoffTest : public ::testing::Test {
 protected:
  std::string exposition() const { return prometheus::TextSerializer().Serialize(registry.Collect()); }

  prometheus::Registry registry;
  SyncMetrics metrics{registry};
  FailureBackoff backoff{"push_orders", metrics};
};

// A certificate that fails verification is a configuration problem: the job pauses instead of
// retrying within seconds, and the refusal is counted for an alert.
TEST_F(FailureBackoffTest, ARefusedCertificatePausesTheJobAndIsCounted) {
  const api::Outcome refused = outcome(
      OutcomeKind::not_sent, 0, "TLS handshake with provider:443: the provider's certificate is not trusted", true);
  EXPECT_EQ(backoff.note_failure(refused), 1min);
  EXPECT_TRUE(backoff.paused());
  JobRun run;
  EXPECT_TRUE(backoff.holds(run));
  EXPECT_GT(run.back_off, 59s);
  EXPECT_EQ(backoff.note_failure(refused), 2min);
  const std::string text = exposition();
  EXPECT_NE(text.find("fulfillsync_tls_certificate_refusals_total{sync_job=\"push_orders\"} 2"), std::string::npos)
      << text;
  // Not a credentials problem, and the provider is not away.
  EXPECT_EQ(text.find("fulfillsync_job_paused{sync_job=\"push_orders\"} 1"), std::string::npos) << text;
  EXPECT_TRUE(metrics.provider_reachable());

  backoff.note_success();
  EXPECT_FALSE(backoff.paused());
}

TEST_F(FailureBackoffTest, NoConnectionMarksTheProviderUnreachableUntilAnAnswer) {
  EXPECT_TRUE(metrics.provider_reachable());
  EXPECT_EQ(backoff.note_failure(outcome(OutcomeKind::not_sent, 0, "connect: refused")), 1s);
  EXPECT_FALSE(backoff.paused());
  EXPECT_FALSE(metrics.provider_reachable());
  EXPECT_NE(exposition().find("fulfillsync_provider_reachable 0"), std::string::npos);
  EXPECT_EQ(backoff.note_failure(outcome(OutcomeKind::ambiguous, 503)), 2s);
  EXPECT_FALSE(metrics.provider_reachable());
  backoff.note_success();
  EXPECT_TRUE(metrics.provider_reachable());
  EXPECT_NE(exposition().find("fulfillsync_provider_reachable 1"), std::string::npos);
}

TEST_F(FailureBackoffTest, RefusedCredentialsPauseTheJob) {
  EXPECT_EQ(backoff.note_failure(outcome(OutcomeKind::unauthorized, 401)), 1min);
  EXPECT_TRUE(backoff.paused());
  EXPECT_NE(exposition().find("fulfillsync_job_paused{sync_job=\"push_orders\"} 1"), std::string::npos);
  backoff.note_success();
  EXPECT_NE(exposition().find("fulfillsync_job_paused{sync_job=\"push_orders\"} 0"), std::string::npos);
}

}  // namespace
}  // namespace fulfillsync::daemon
