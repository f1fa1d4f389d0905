// The SKU map end to end: N products with V variants each are created at fulfillsync-sandbox through
// its API (POST /product), then `fulfillsyncd once` with only pull_stock on reads the whole product
// list into a merchant's SQLite file ({prefix}variant_sync). Two passes: the first writes every SKU,
// the second (after the stock of every variant changed) updates every row. Figures:
//   1. stock rows written per second, each pass (the daemon's wall time from start to exit);
//   2. API calls per stock read: GET /product requests per product read (target 1/250: one request
//      per page of 250 products, whatever their variants), and per SKU.
// Usage: stock_bench [--products N] [--variants V] [--quick]
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>

#include "bench_support.hpp"
#include "fulfillsync/testing/http.hpp"

namespace {

using namespace fulfillsync::bench;
using namespace std::chrono_literals;

constexpr int kPageSize = 250;
constexpr double kCallsPerProductTarget = 1.0 / kPageSize;

struct Options {
  long products = 0;
  long variants = 0;
  std::string only;
  fs::path bin_dir;
};

WorldOptions stock_world() {
  WorldOptions world;
  world.jobs = fmt::format(
      "    push_orders: {{enabled: false}}\n"
      "    push_cancels: {{enabled: false}}\n"
      "    push_returns: {{enabled: false}}\n"
      "    pull_shipments: {{enabled: false}}\n"
      "    mark_tracking: {{mode: never}}\n"
      "    pull_returns: {{enabled: false}}\n"
      "    pull_lots: {{enabled: false}}\n"
      "    pull_stock: {{page_size: {}}}\n",
      kPageSize);
  return world;
}

const std::map<std::string, std::string> kCreating = {{"Authorization", std::string("Bearer ") + Sandbox::kToken},
                                                      {"service_channel_id", "2"},
                                                      {"Content-Type", "application/json"}};

// Products BENCH-000001.. with `variants` variants each, on one keep-alive connection.
void create_products(World& world, long products, long variants) {
  fulfillsync::testing::HttpConnection connection(world.sandbox().port());
  for (long p = 1; p <= products; ++p) {
    std::string body = fmt::format(R"({{"name":"Bench product {0}","variants":[)", p);
    for (long v = 1; v <= variants; ++v) {
      body += fmt::format(R"({}{{"name":"Bench product {} #{}","sku":"BENCH-{:06}-{}"}})", v == 1 ? "" : ",", p, v,
                          p, v);
    }
    body += "]}";
    const auto created = connection.request("POST", "/2026-07/product", kCreating, body);
    if (created.status != 201) throw world.failure(fmt::format("POST /product answered {}: {}", created.status, created.body));
  }
}

// Every variant's stock moved: one lot at center 8 of each inventory item the map holds.
void change_stock(World& world) {
  SQLite::Statement query(world.merchant(), "SELECT inventory_id FROM fulfillsync_variant_sync WHERE inventory_id IS NOT NULL");
  fulfillsync::testing::HttpConnection connection(world.sandbox().port());
  const std::map<std::string, std::string> admin = {{"X-Sandbox-Admin-Token", Sandbox::kAdminToken},
                                                    {"Content-Type", "application/json"}};
  long n = 0;
  while (query.executeStep()) {
    const auto set = connection.request("POST", fmt::format("/_sandbox/inventory/{}/lots", query.getColumn(0).getInt64()),
                                        admin, fmt::format(R"({{"lot_number":"","location_id":8,"on_hand":{}}})", 7 + ++n % 50));
    if (set.status != 200) throw world.failure(fmt::format("setting stock answered {}: {}", set.status, set.body));
  }
}

std::uint64_t product_list_requests(const Stats& stats) {
  std::uint64_t total = 0;
  for (const auto& [route, count] : stats.requests) {
    if (route.rfind("GET /product ", 0) == 0) total += count;
  }
  return total;
}

long count_rows(SQLite::Database& db, const std::string& sql) { return db.execAndGet(sql).getInt64(); }

// One `fulfillsyncd once`: its wall seconds and the GET /product requests it made.
std::pair<double, std::uint64_t> pass(World& world, const std::string& log_name) {
  const Stats before = read_stats(world.sandbox());
  const auto start = Clock::now();
  const auto daemon = world.start_daemon("once", log_name);
  const auto status = daemon->wait_for_exit(600s);
  const double seconds = seconds_since(start);
  if (!status || *status != 0) throw world.failure(fmt::format("fulfillsyncd once ended with {}", status.value_or(-1)));
  return {seconds, product_list_requests(read_stats(world.sandbox())) - product_list_requests(before)};
}

void run_stock(const Options& options, Report& report) {
  const long skus = options.products * options.variants;
  fmt::print("\n== stock rows: `fulfillsyncd once` with only pull_stock, {} products x {} variants ==\n",
             options.products, options.variants);
  World world(options.bin_dir, stock_world());
  world.start_sandbox();
  const auto seeding = Clock::now();
  create_products(world, options.products, options.variants);
  fmt::print("created {} products at the sandbox in {:.1f} s\n", options.products, seconds_since(seeding));
  // The sandbox's demo seed adds its own few products.
  const long listed = options.products + 4;

  const auto [first_seconds, first_calls] = pass(world, "first");
  const long rows = count_rows(world.merchant(), "SELECT count(*) FROM fulfillsync_variant_sync");
  fmt::print("pass 1: {} rows in {:.2f} s = {:.0f} rows/s; {} GET /product requests for {} products\n", rows,
             first_seconds, static_cast<double>(rows) / first_seconds, first_calls, listed);
  change_stock(world);
  const auto [second_seconds, second_calls] = pass(world, "second");
  const long current = count_rows(world.merchant(), "SELECT count(*) FROM fulfillsync_variant_sync WHERE on_hand_qty BETWEEN 7 AND 56");
  fmt::print("pass 2: {} rows in {:.2f} s = {:.0f} rows/s; {} rows at the stock just set\n", rows, second_seconds,
             static_cast<double>(rows) / second_seconds, current);
  world.print_logs();

  const double per_product = static_cast<double>(first_calls) / static_cast<double>(listed);
  report.add(fmt::format("stock rows written/s (pass 1, {} SKUs)", skus),
             fmt::format("{:.0f} rows/s ({:.2f} s)", static_cast<double>(rows) / first_seconds, first_seconds), "-",
             std::nullopt);
  report.add("stock rows written/s (pass 2, every stock changed)",
             fmt::format("{:.0f} rows/s ({:.2f} s)", static_cast<double>(rows) / second_seconds, second_seconds), "-",
             std::nullopt);
  report.add("API calls per product read", fmt::format("{:.5f} ({} requests)", per_product, first_calls),
             fmt::format("<= {:.5f} (1/{})", kCallsPerProductTarget, kPageSize),
             per_product <= kCallsPerProductTarget * 1.001 + 1.0 / static_cast<double>(listed));
  report.add("API calls per SKU read", fmt::format("{:.5f}", static_cast<double>(first_calls) / static_cast<double>(rows)),
             "-", std::nullopt);
  if (rows < skus) report.note(fmt::format("only {} of {} SKUs were written", rows, skus));
}

constexpr const char* kUsage =
    "Usage: stock_bench [--products N] [--variants V] [--quick]\n"
    "defaults: --products 20000 --variants 3; --quick: --products 2000 (explicit options win)\n";

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  options.bin_dir = fs::read_symlink("/proc/self/exe").parent_path();
  std::optional<long> products, variants;
  const auto parsed = parse_command_line(argc, argv, kUsage, [&](const std::string& name, const std::string& value) {
    if (name == "--products") {
      products = positive(name, value);
    } else if (name == "--variants") {
      variants = positive(name, value);
    } else {
      return false;
    }
    return true;
  });
  if (!parsed) return std::nullopt;
  options.products = products.value_or(*parsed ? 2'000 : 20'000);
  options.variants = variants.value_or(3);
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main<Options>("stock_bench", kUsage, argc, argv, parse_options, {{"stock", run_stock}});
}
