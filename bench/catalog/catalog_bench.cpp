// The catalog push end to end: fulfillsyncd reads products with their variants (1 to 5 each) from a
// merchant's SQLite file and creates them at fulfillsync-sandbox on loopback, rate limiting and
// faults off, only push_products running. Two figures:
//   1. API calls per product synced (target 1.0: one POST /product with all its variants), by route;
//   2. throughput of `fulfillsyncd once` over N products (target 2,000 products/s or more), with the
//      daemon's CPU per product.
// Each scenario has its own temp dir, merchant database, checkpoint store and sandbox.
// Usage: catalog_bench [--products N] [--quick] [--only calls|throughput]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <simdjson.h>

#include "bench_support.hpp"

namespace {

using namespace fulfillsync::bench;
using namespace std::chrono_literals;

struct Options {
  long products = 0;
  std::string only;  // empty: every scenario
  fs::path bin_dir;
};

// push_products on (batch 1000, concurrency 16), every other job off: the calls counted are the catalog's.
WorldOptions catalog_only() {
  WorldOptions world;
  world.jobs =
      "    push_products: {enabled: true, batch_size: 1000, concurrency: 16}\n"
      "    push_orders: {enabled: false}\n"
      "    push_cancels: {enabled: false}\n"
      "    push_returns: {enabled: false}\n"
      "    pull_shipments: {enabled: false}\n"
      "    mark_tracking: {mode: never}\n"
      "    pull_returns: {enabled: false}\n"
      "    pull_lots: {enabled: false}\n"
      "    pull_stock: {enabled: false}\n";
  return world;
}

// Products P0000001.. with 1 to 5 variants each (product n has 1 + n % 5), every column filled.
void seed_catalog(SQLite::Database& db, long count) {
  const auto start = Clock::now();
  SQLite::Transaction transaction(db);
  SQLite::Statement product(db, "INSERT INTO fulfillsync_products (reference_id, name, type, taxonomy_id) "
                                "VALUES (?1, ?2, 'Apparel', 11)");
  SQLite::Statement variant(
      db, "INSERT INTO fulfillsync_variants (sku, product_reference_id, name, gtin, upc, status, weight, weight_unit, "
          "length, width, height, dimension_unit, customs_country_of_origin, customs_hs_tariff_code, "
          "customs_description, customs_value, customs_currency, is_lot, minimum_shelf_life_days) "
          "VALUES (?1, ?2, ?3, ?4, ?5, 'Active', 7.5, 'oz', 10, 3, 2, 'in', 'US', '6109.10', 'Cotton shirt', '12.50', "
          "'USD', 0, NULL)");
  long variants = 0;
  for (long n = 1; n <= count; ++n) {
    const std::string reference = reference_of("P", n);
    product.bind(1, reference);
    product.bind(2, fmt::format("Product {}", n));
    product.exec();
    product.reset();
    for (long j = 1; j <= 1 + n % 5; ++j) {
      variant.bind(1, fmt::format("{}-{}", reference, j));
      variant.bind(2, reference);
      variant.bind(3, fmt::format("Product {} size {}", n, j));
      variant.bind(4, fmt::format("{:013}", 4'000'000'000'000L + n * 10 + j));
      variant.bind(5, fmt::format("{:012}", 100'000'000'000L + n * 10 + j));
      variant.exec();
      variant.reset();
      ++variants;
    }
  }
  transaction.commit();
  fmt::print("seeded {} products with {} variants in {:.1f} s\n", count, variants, seconds_since(start));
}

std::uint64_t products_created(const Sandbox& sandbox) {
  const std::string body = admin_get(sandbox, "/_sandbox/stats");
  simdjson::dom::parser parser;
  std::uint64_t created = 0;
  if (parser.parse(body)["creates"]["products"].get(created) != simdjson::SUCCESS) created = 0;
  return created;
}

// The first figure of /proc/loadavg: how busy the machine was (other processes slow both ends).
std::string load_average() {
  std::FILE* file = std::fopen("/proc/loadavg", "r");
  if (file == nullptr) return "?";
  char buffer[64] = {};
  const std::size_t read = std::fread(buffer, 1, sizeof buffer - 1, file);
  std::fclose(file);
  const std::string text(buffer, read);
  return text.substr(0, text.find(' '));
}

struct OnceRun {
  double seconds = 0;
  int exit_status = -1;
  rusage daemon{};
  double sandbox_cpu = 0;
  Stats before, after;
  std::uint64_t created = 0;
};

OnceRun push_once(World& world, long count) {
  OnceRun run;
  run.before = read_stats(world.sandbox());
  const std::uint64_t created_before = products_created(world.sandbox());
  const double sandbox_cpu = cpu_seconds_of(world.sandbox().process().pid());
  const auto start = Clock::now();
  const auto daemon = world.start_daemon("once");
  const auto limit = 60s + std::chrono::milliseconds(10 * count);
  const auto status = daemon->wait_for_exit(limit);
  run.seconds = seconds_since(start);
  if (!status) throw world.failure("fulfillsyncd once did not finish in time");
  run.exit_status = *status;
  run.daemon = daemon->usage();
  run.sandbox_cpu = cpu_seconds_of(world.sandbox().process().pid()) - sandbox_cpu;
  run.after = read_stats(world.sandbox());
  run.created = products_created(world.sandbox()) - created_before;
  return run;
}

bool check_complete(const OnceRun& run, long count, Report& report) {
  if (run.exit_status == 0 && run.created == static_cast<std::uint64_t>(count)) return true;
  report.note(fmt::format("fulfillsyncd once exited with status {} and created {} of {} products", run.exit_status,
                          run.created, count));
  return false;
}

void run_calls(const Options& options, Report& report) {
  fmt::print("\n== 1. API calls per product synced: `fulfillsyncd once` over {} products, no faults ==\n",
             options.products);
  World world(options.bin_dir, catalog_only());
  seed_catalog(world.merchant(), options.products);
  world.start_sandbox();
  const OnceRun run = push_once(world, options.products);
  std::uint64_t catalog_calls = 0;
  for (const auto& [route, made] : run.after.requests_since(run.before)) {
    fmt::print("  {:<36} {}\n", route, made);
    if (route.find("/product") != std::string::npos) catalog_calls += made;
  }
  const std::uint64_t requests = run.after.requests_total - run.before.requests_total;
  const double per_product =
      static_cast<double>(catalog_calls) / static_cast<double>(std::max<std::uint64_t>(run.created, 1));
  fmt::print("{} catalog requests ({} in all, with GET /channel) for {} products created = {:.4f} calls/product\n",
             catalog_calls, requests, run.created, per_product);
  world.print_logs();
  const bool complete = check_complete(run, options.products, report);
  report.add("1. API calls per product created with its variants",
             fmt::format("{:.4f} ({} calls / {} products)", per_product, catalog_calls, run.created), "1.0",
             complete && per_product <= 1.0);
}

void run_throughput(const Options& options, Report& report) {
  fmt::print("\n== 2. catalog push throughput: `fulfillsyncd once` over {} products (batch 1000, concurrency 16) ==\n",
             options.products);
  World world(options.bin_dir, catalog_only());
  seed_catalog(world.merchant(), options.products);
  world.start_sandbox();
  const OnceRun run = push_once(world, options.products);
  const double per_second = static_cast<double>(run.created) / run.seconds;
  const double user = seconds_of(run.daemon.ru_utime);
  const double sys = seconds_of(run.daemon.ru_stime);
  const double products = static_cast<double>(std::max<std::uint64_t>(run.created, 1));
  fmt::print("pushed {} products in {:.2f} s = {:.0f} products/s (exit status {})\n", run.created, run.seconds,
             per_second, run.exit_status);
  fmt::print("daemon CPU: {:.2f} s user + {:.2f} s system = {:.0f} us/product; peak RSS {:.1f} MiB\n", user, sys,
             (user + sys) * 1e6 / products, static_cast<double>(run.daemon.ru_maxrss) / kKiBPerMiB);
  fmt::print("sandbox CPU meanwhile: {:.2f} s = {:.0f} us/product; load average at the end: {}\n", run.sandbox_cpu,
             run.sandbox_cpu * 1e6 / products, load_average());
  world.print_logs();
  const bool complete = check_complete(run, options.products, report);
  report.add(fmt::format("2. catalog push throughput (once, {} products)", options.products),
             fmt::format("{:.0f} products/s", per_second), ">= 2000 products/s", complete && per_second >= 2000);
  report.add("2. daemon CPU per product", fmt::format("{:.0f} us", (user + sys) * 1e6 / products), "-", std::nullopt);
}

constexpr const char* kUsage =
    "Usage: catalog_bench [--products N] [--quick] [--only calls|throughput]\n"
    "--quick: --products 2000 (explicit options win); default 20000\n";

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  options.bin_dir = fs::read_symlink("/proc/self/exe").parent_path();
  std::optional<long> products;
  const auto parsed = parse_command_line(argc, argv, kUsage, [&](const std::string& name, const std::string& value) {
    if (name == "--products") {
      products = positive(name, value);
    } else if (name == "--only") {
      if (value != "calls" && value != "throughput") throw std::runtime_error("--only takes calls or throughput");
      options.only = value;
    } else {
      return false;
    }
    return true;
  });
  if (!parsed) return std::nullopt;
  options.products = products.value_or(*parsed ? 2'000 : 20'000);
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  return bench_main<Options>("catalog_bench", kUsage, argc, argv, parse_options,
                             {{"calls", run_calls}, {"throughput", run_throughput}});
}
