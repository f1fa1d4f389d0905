// The scheduler's idle jobs: a pull whose runs find nothing new rests longer and longer, up to a
// bound (a push that settles nothing, twice its interval), and each is back to its interval as soon
// as any run settles something. A run that holds work back until a moment runs again by then.
// The rests are read from the scheduler, not timed; a pull's is exported (fulfillsync_pull_rest_seconds).
#include "service/scheduler.hpp"

#include <utility>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>
#include <prometheus/registry.h>

namespace fulfillsync::daemon {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

// A job that answers each run from `answer(run number)` and stops the loop after `stop_after` runs.
class FakeJob final : public Job {
 public:
  FakeJob(std::string name, bool pulls, asio::io_context& io, int stop_after, std::function<JobRun(int)> answer)
      : name_(std::move(name)), pulls_(pulls), io_(io), stop_after_(stop_after), answer_(std::move(answer)) {}
  std::string_view name() const override { return name_; }
  bool pulls() const override { return pulls_; }
  bool paces_itself() const override { return paces_itself_; }
  asio::awaitable<JobRun> run() override {
    ++runs;
    if (runs == stop_after_) io_.stop();
    co_return answer_(runs);
  }
  int backlog() override { return 0; }
  bool paused() const override { return false; }
  int runs = 0;
  bool paces_itself_ = false;

 private:
  std::string name_;
  bool pulls_;
  asio::io_context& io_;
  int stop_after_;
  std::function<JobRun(int)> answer_;
};

class SchedulerTest : public ::testing::Test {
 protected:
  asio::io_context io;
  prometheus::Registry registry;
  SyncMetrics metrics{registry};
  bool stopping = false;
  int in_flight = 0;
  Scheduler scheduler{io.get_executor(), metrics, stopping, in_flight};

  FakeJob& add(std::string name, bool pulls, config::Duration interval, int stop_after,
               std::function<JobRun(int)> answer, bool paces_itself = false) {
    auto job = std::make_unique<FakeJob>(std::move(name), pulls, io, stop_after, std::move(answer));
    job->paces_itself_ = paces_itself;
    FakeJob& added = *job;
    scheduler.add(std::move(job), interval);
    return added;
  }

  // fulfillsync_pull_rest_seconds of `job`, if it has the series.
  std::optional<double> exported_rest(std::string_view job) {
    for (const auto& family : registry.Collect()) {
      if (family.name != "fulfillsync_pull_rest_seconds") continue;
      for (const auto& metric : family.metric) {
        for (const auto& label : metric.label) {
          if (label.name == "sync_job" && label.value == job) return metric.gauge.value;
        }
      }
    }
    return std::nullopt;
  }
};

TEST_F(SchedulerTest, AQuietPullRestsTwiceAsLongEachRunUpToItsBound) {
  std::vector<std::chrono::milliseconds> rests;
  FakeJob* pull = nullptr;
  pull = &add("pull_shipments", true, 1ms, 7, [&](int) {
    rests.push_back(scheduler.rest_after_quiet_runs(*pull));  // before this run is counted
    return JobRun{.quiet = true};
  });
  scheduler.start();
  io.run();
  EXPECT_EQ(rests, (std::vector<std::chrono::milliseconds>{1ms, 2ms, 4ms, 8ms, 8ms, 8ms, 8ms}));
  EXPECT_EQ(scheduler.rest_after_quiet_runs(*pull), 1ms * Scheduler::kLongestQuietRest);
}

TEST_F(SchedulerTest, APullThatFindsSomethingIsBackToItsInterval) {
  FakeJob* pull = nullptr;
  std::vector<std::chrono::milliseconds> rests;
  pull = &add("pull_returns", true, 1ms, 6, [&](int run) {
    rests.push_back(scheduler.rest_after_quiet_runs(*pull));
    return JobRun{.quiet = run != 3};
  });
  scheduler.start();
  io.run();
  EXPECT_EQ(rests, (std::vector<std::chrono::milliseconds>{1ms, 2ms, 4ms, 1ms, 2ms, 4ms}));
}

TEST_F(SchedulerTest, AQuietPullThatWritesWhatItHadAgainKeepsResting) {
  // pull_returns writes the statuses of the open returns at every pass, moved or not.
  std::vector<std::chrono::milliseconds> rests;
  FakeJob* pull = nullptr;
  pull = &add("pull_returns", true, 1ms, 5, [&](int) {
    rests.push_back(scheduler.rest_after_quiet_runs(*pull));
    return JobRun{.settled = 2, .quiet = true};
  });
  FakeJob& other = add("pull_shipments", true, 1h, 0, [](int) { return JobRun{.quiet = true}; });
  scheduler.start();
  io.run_for(5s);  // stopped by pull_returns' 5th run
  EXPECT_EQ(rests, (std::vector<std::chrono::milliseconds>{1ms, 2ms, 4ms, 8ms, 8ms}));
  ASSERT_EQ(other.runs, 1);
  EXPECT_EQ(scheduler.rest_after_quiet_runs(other), std::chrono::milliseconds(2h));
}

TEST_F(SchedulerTest, ThePullsItPacesExportTheirRest) {
  std::vector<std::optional<double>> exported;
  FakeJob* pull = nullptr;
  pull = &add("pull_returns", true, 10ms, 5, [&](int run) {
    exported.push_back(exported_rest("pull_returns"));  // as the last run left it
    if (run == 3) return JobRun{.ok = false, .back_off = 1ms};  // a failed run: back to the interval
    return JobRun{.quiet = true};
  });
  add("pull_lots", true, 1h, 0, [](int) { return JobRun{}; }, true);
  add("push_orders", false, 1h, 0, [](int) { return JobRun{}; });
  EXPECT_EQ(exported_rest("pull_returns"), 0.01);  // from the start
  scheduler.start();
  io.run_for(30s);
  ASSERT_EQ(pull->runs, 5);
  EXPECT_EQ(exported, (std::vector<std::optional<double>>{0.01, 0.02, 0.04, 0.01, 0.02}));
  EXPECT_EQ(exported_rest("pull_lots"), std::nullopt) << "pull_lots exports its own interval";
  EXPECT_EQ(exported_rest("push_orders"), std::nullopt);
}

TEST_F(SchedulerTest, APushThatSettlesSomethingEndsTheQuietRests) {
  // The pull has rested long (its interval is an hour); the push settles an order on its 3rd run.
  FakeJob& pull = add("pull_shipments", true, 1h, 0, [](int) { return JobRun{.quiet = true}; });
  add("push_orders", false, 1ms, 3, [](int run) { return JobRun{.settled = run == 3 ? 1 : 0}; });
  scheduler.start();
  io.run_for(5s);  // stopped by the push's 3rd run
  ASSERT_EQ(pull.runs, 1);
  EXPECT_EQ(scheduler.rest_after_quiet_runs(pull), std::chrono::milliseconds(1h));
}

TEST_F(SchedulerTest, APushThatSettlesNothingRestsTwiceItsIntervalAtMost) {
  std::vector<std::chrono::milliseconds> rests;
  FakeJob* push = nullptr;
  push = &add("push_orders", false, 1ms, 6, [&](int run) {
    rests.push_back(scheduler.rest_after_quiet_runs(*push));
    return JobRun{.settled = run == 4 ? 1 : 0};
  });
  scheduler.start();
  io.run();
  EXPECT_EQ(rests, (std::vector<std::chrono::milliseconds>{1ms, 2ms, 2ms, 2ms, 1ms, 2ms}));
}

TEST_F(SchedulerTest, APushThatSettlesNothingLeavesThemQuiet) {
  FakeJob& pull = add("pull_shipments", true, 1h, 0, [](int) { return JobRun{.quiet = true}; });
  add("push_orders", false, 1ms, 3, [](int) { return JobRun{}; });
  scheduler.start();
  io.run_for(5s);
  ASSERT_EQ(pull.runs, 1);
  EXPECT_EQ(scheduler.rest_after_quiet_runs(pull), std::chrono::milliseconds(2h));
}

TEST_F(SchedulerTest, ARunThatHoldsWorkBackRunsAgainByItsMomentWhateverItsInterval) {
  // The marks' interval is an hour; each run holds a batch back for 1 ms more (JobRun::next_run_within).
  FakeJob& marks = add("mark_tracking", false, 1h, 3, [](int) { return JobRun{.next_run_within = 1ms}; });
  scheduler.start();
  io.run_for(30s);  // stopped by its 3rd run
  EXPECT_EQ(marks.runs, 3);
}

}  // namespace
}  // namespace fulfillsync::daemon
