// Throughput and memory of fulfillsync-sandbox over keep-alive loopback connections, with faults
// and rate limiting off:
//   1. POST /order per second (target 5,000 or more on one core);
//   2. GET /order pages of 250 orders per second (target 500 or more);
//   3. resident memory with N stored orders (target under 2 GiB for 1,000,000), seeded through
//      the admin bulk path so it takes seconds, not minutes.
// Usage: sandbox_bench [--orders-to-post N] [--pages N] [--stored-orders N] [--connections N]
//                      [--sandbox PATH]
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "fulfillsync/testing/http.hpp"

namespace {

using namespace fulfillsync::bench;
namespace testing = fulfillsync::testing;

struct Options {
  long orders_to_post = 20000;
  long pages = 2000;
  long stored_orders = 1000000;
  int connections = 2;
  std::string sandbox;
};

const std::map<std::string, std::string> kReading = {{"Authorization", std::string("Bearer ") + Sandbox::kToken}};
const std::map<std::string, std::string> kCreating = {{"Authorization", std::string("Bearer ") + Sandbox::kToken},
                                                      {"service_channel_id", "2"},
                                                      {"Content-Type", "application/json"}};

// POST /order on the write channel; the answer's status.
int post_order(testing::HttpConnection& connection, long n) {
  const std::string body =
      R"({"reference_id":"BENCH-)" + std::to_string(n) +
      R"(","shipping_method":"Standard","recipient":{"name":"Ada Lovelace","email":"ada@example.test","address":{"address1":"1 Main St","city":"Chicago","state":"IL","zip_code":"60601","country":"US"}},"products":[{"reference_id":"BENCH-SKU","name":"Bench Widget","quantity":1}],"financials":{"total_price":19.99}})";
  return connection.request("POST", "/2026-01/order", kCreating, body).status;
}

testing::HttpResponse get_page(testing::HttpConnection& connection, long page) {
  return connection.request("GET", "/2026-01/order?Limit=250&Page=" + std::to_string(page), kReading);
}

Options parse_options(int argc, char** argv) {
  Options options;
  options.sandbox = (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "fulfillsync-sandbox").string();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    const std::string value = argv[i + 1];
    if (name == "--orders-to-post") options.orders_to_post = std::atol(value.c_str());
    else if (name == "--pages") options.pages = std::atol(value.c_str());
    else if (name == "--stored-orders") options.stored_orders = std::atol(value.c_str());
    else if (name == "--connections") options.connections = std::atoi(value.c_str());
    else if (name == "--sandbox") options.sandbox = value;
    else throw std::runtime_error("unknown option " + name);
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse_options(argc, argv);
    Sandbox sandbox({"--log-level", "warn"}, 0, options.sandbox);
    const pid_t pid = sandbox.process().pid();
    std::printf("sandbox pid %d on port %u; %d keep-alive connection(s)\n", pid, sandbox.port(), options.connections);

    {  // 1. POST /order
      testing::HttpConnection warm(sandbox.port());
      post_order(warm, 0);
      std::atomic<long> next{1};
      std::atomic<long> failures{0};
      const auto start = Clock::now();
      std::vector<std::thread> clients;
      for (int c = 0; c < options.connections; ++c) {
        clients.emplace_back([&] {
          testing::HttpConnection connection(sandbox.port());
          for (long n; (n = next.fetch_add(1)) <= options.orders_to_post;) {
            if (post_order(connection, n) != 201) ++failures;
          }
        });
      }
      for (auto& client : clients) client.join();
      const double elapsed = seconds_since(start);
      std::printf("POST /order: %ld orders in %.2f s = %.0f orders/s (%ld failed)\n", options.orders_to_post, elapsed,
                  static_cast<double>(options.orders_to_post) / elapsed, failures.load());
    }

    {  // 2. GET /order pages of 250
      const long stored = options.orders_to_post + 1;
      const long pages_available = (stored + 249) / 250;
      std::atomic<long> next{0};
      std::atomic<long> bytes{0};
      const auto start = Clock::now();
      std::vector<std::thread> clients;
      for (int c = 0; c < options.connections; ++c) {
        clients.emplace_back([&] {
          testing::HttpConnection connection(sandbox.port());
          for (long n; (n = next.fetch_add(1)) < options.pages;) {
            const testing::HttpResponse page = get_page(connection, n % pages_available + 1);
            if (page.status != 200) throw std::runtime_error("GET /order failed");
            bytes += static_cast<long>(page.body.size());
          }
        });
      }
      for (auto& client : clients) client.join();
      const double elapsed = seconds_since(start);
      std::printf("GET /order?Limit=250: %ld pages in %.2f s = %.0f pages/s (%.1f MB/s, %ld orders stored)\n",
                  options.pages, elapsed, static_cast<double>(options.pages) / elapsed,
                  static_cast<double>(bytes.load()) / elapsed / 1e6, stored);
    }

    {  // 3. resident memory with N stored orders
      const long before = status_kib(pid, "VmRSS");
      const long to_add = options.stored_orders - (options.orders_to_post + 1);
      const auto start = Clock::now();
      for (long added = 0; added < to_add;) {
        const long batch = std::min(to_add - added, 100000L);
        admin_request(sandbox, "POST", "/_sandbox/orders:bulk?count=" + std::to_string(batch));
        added += batch;
      }
      const double elapsed = seconds_since(start);
      const long after = status_kib(pid, "VmRSS");
      const long stored = std::max(options.stored_orders, options.orders_to_post + 1);
      std::printf("memory: %ld orders stored (seeded in %.1f s); resident %.1f MiB (%.1f MiB before seeding) = %.0f bytes/order\n",
                  stored, elapsed, static_cast<double>(after) / 1024, static_cast<double>(before) / 1024,
                  static_cast<double>(after) * 1024 / static_cast<double>(std::max(options.stored_orders, 1L)));
      testing::HttpConnection reader(sandbox.port());
      const auto page_start = Clock::now();
      for (int i = 0; i < 20; ++i) get_page(reader, (i * 997) % ((stored + 249) / 250) + 1);
      std::printf("GET /order?Limit=250 with %ld orders stored: %.0f pages/s (one connection)\n", stored,
                  20 / seconds_since(page_start));
    }

    sandbox.process().send_signal(SIGTERM);
    std::printf("sandbox exited with %d\n", sandbox.process().wait_for_exit(std::chrono::seconds(30)).value_or(-1));
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "sandbox_bench: %s\n", error.what());
    return 1;
  }
}
