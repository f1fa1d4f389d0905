// Calls per second through the whole API client (budget, token, transport, outcome) against the
// sandbox over keep-alive loopback connections, with the sandbox's rate limit off; and the client's
// CPU time per call.
//
//   build/bench/api_client/api_client_bench [calls] [concurrency]
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>

#include <prometheus/registry.h>

#include "fulfillsync/api/client.hpp"
#include "fulfillsync/testing/sandbox.hpp"

namespace asio = boost::asio;
using namespace fulfillsync;
using namespace std::chrono_literals;

namespace {

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

struct Run {
  double seconds;
  double cpu;
  int failures;
};

Run measure(api::ApiClient& client, asio::io_context& io, int calls, int concurrency, const api::ApiRequest& request) {
  int remaining = calls;
  int failures = 0;
  for (int worker = 0; worker < concurrency; ++worker) {
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          while (remaining > 0) {
            --remaining;
            const api::Outcome outcome = co_await client.call(request);
            if (!outcome.ok()) ++failures;
          }
        },
        asio::detached);
  }
  const double cpu_before = cpu_seconds();
  const auto started = std::chrono::steady_clock::now();
  io.restart();
  io.run();
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
          cpu_seconds() - cpu_before, failures};
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int concurrency = argc > 2 ? std::atoi(argv[2]) : 4;
  testing::Sandbox sandbox;
  testing::TempDir dir;
  testing::write_file(dir / "token", std::string(testing::Sandbox::kToken) + "\n");

  asio::io_context io;
  api::TransportOptions options{*api::parse_base_url(sandbox.base_url())};
  options.pool_size = static_cast<std::size_t>(concurrency);
  api::Transport transport(io.get_executor(), options);
  api::PersonalAccessToken token(dir / "token");
  prometheus::Registry registry;
  api::ApiMetrics metrics(registry);
  api::ApiClient client(io.get_executor(), transport, token, metrics, api::ClientOptions{"2026-07", 100'000'000});

  const api::ApiRequest get_order{"GET", "/order", "/order", {{"Limit", "1"}}};
  const api::ApiRequest list_channels{"GET", "/channel", "/channel"};
  measure(client, io, 500, concurrency, list_channels);  // warm-up: connections, allocations
  for (const auto& [name, request] : {std::pair{"GET /channel", list_channels}, std::pair{"GET /order", get_order}}) {
    const Run run = measure(client, io, calls, concurrency, request);
    std::printf("%-14s %d calls, %d at a time: %.0f calls/s, client CPU %.1f us/call, %d not successful\n", name,
                calls, concurrency, calls / run.seconds, run.cpu / calls * 1e6, run.failures);
  }
  return 0;
}
