// Chaos (sync_fixture.hpp): the daemon under a mix of provider faults, with the sandbox's clock
// running, while a merchant application inserts, edits and cancels orders, writes returns and creates
// and edits catalog products and variants (push_products on), the daemon is SIGKILLed at random
// moments (some of them at a failpoint) and restarted, and the sandbox itself is killed and
// restarted on its --state file. Then every promise of the sync is checked.
//
//   FULFILLSYNC_CHAOS_SEED=N     the seed of the run's choices (printed at the start and with every
//                                failure); timing still varies between runs of one seed
//   FULFILLSYNC_CHAOS_SECONDS=N  how long the chaos lasts (default 120, 60 under a sanitizer, 60 for the
//                                second mode, 60 (40) for the PostgreSQL mode; the README shows a longer run)
//   FULFILLSYNC_CHAOS_KEEP=DIR   where a failed run's evidence is kept, in <DIR>/<test>-seed-<N> (default
//                                DIR: chaos-failures in the build tree): the databases (merchant, checkpoint,
//                                sandbox state), the daemons' logs (fulfillsyncd.log, at debug level), the
//                                sandbox's orders and the PostgreSQL server's log. The output names the
//                                directory and shows, for each order, return or product a failure names,
//                                its rows on both sides and the last log lines and sandbox requests naming
//                                it. Nothing is kept from a run that passes.
//
// A second mode (OlderStoreCopiesRestoredBetweenKills) also copies the checkpoint store now and then
// while the daemon is down, and puts such an older copy back in its place between kills, as an
// operator restoring a backup would: the promises are the same, and no create is refused as a
// duplicate (the older store looks up what the result tables say may have been sent), and a product
// update it had in flight, sent again, brings back no version a newer store had replaced.
//
// A third mode (PostgresServerRestartedMidRun) keeps the merchant database in a PostgreSQL 15 server
// the test starts (testing::PostgresServer): the merchant application writes through a libpq
// connection, and the server itself is restarted a few times while the daemon runs, besides the kills
// and faults. The end checks read the result tables as copied into the SQLite file the checks know.
#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <random>
#include <regex>

#include <fmt/ranges.h>

#include "fulfillsync/common/timestamps.hpp"
#include "fulfillsync/daemon/exit_codes.hpp"
#include "fulfillsync/daemon/job/failpoints.hpp"
#include "fulfillsync/testing/postgres.hpp"
#include "sync_fixture.hpp"

namespace fulfillsync::testing {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

// Creates, cancels and marks (POST), catalog changes (PATCH) and lookups and pulls (GET) each meet
// every kind of fault. The injected 429s ask for 1 s instead of production's 25, so that the
// back-offs leave time for the rest.
constexpr std::string_view kFaultMix =
    "route=POST /**;429=0.03;500=0.02;503=0.02;drop_before=0.03;drop_after=0.03;malformed=0.02;"
    "latency_ms=300@0.05;retry_after_s=1 | "
    "route=PATCH /**;429=0.03;500=0.02;503=0.02;drop_before=0.03;drop_after=0.03;malformed=0.02;"
    "latency_ms=300@0.05;retry_after_s=1 | "
    "route=GET /**;429=0.02;502=0.02;drop_before=0.02;drop_after=0.02;malformed=0.02;truncated=0.02;"
    "latency_ms=300@0.05;retry_after_s=1";

constexpr std::string_view kJobs =
    "    pull_shipments: {interval: 500ms}\n"
    "    mark_tracking: {interval: 200ms, batch_size: 100, batch_wait: 1s}\n"
    "    pull_returns: {interval: 1s}\n"
    "    push_products: {enabled: true, interval: 100ms, batch_size: 50, concurrency: 4}\n";

// The merchant application's transactions last milliseconds; a short look-back keeps the check on
// the source cursors tight (they may move back by at most this, see CheckpointWatch).
constexpr auto kLookBack = 3s;
// api.request_timeout in the sync tests' configuration (sync_fixture.hpp).
constexpr auto kRequestTimeout = 5s;
constexpr int kSandboxRestarts = 3;
constexpr int kWorkLeft = 75;

struct ChaosOptions {
  std::uint64_t seed;
  std::chrono::seconds duration;
};

// Under a sanitizer everything runs several times slower; the plain build has the full run.
constexpr std::chrono::seconds kDefaultDuration{kSanitized ? 60 : 120};
// The mode restoring older copies of the store: enough kills for a dozen restores, and both modes
// together within the suite's time.
constexpr std::chrono::seconds kRestoringDuration{60};
// The PostgreSQL mode: about a minute (less under a sanitizer), with the server restarted this often.
constexpr std::chrono::seconds kPostgresDuration{kSanitized ? 40 : 60};
constexpr int kPostgresRestarts = 3;

ChaosOptions chaos_options(std::chrono::seconds default_duration) {
  ChaosOptions options{std::random_device{}(), default_duration};
  if (const char* seed = std::getenv("FULFILLSYNC_CHAOS_SEED")) options.seed = std::stoull(seed);
  if (const char* seconds = std::getenv("FULFILLSYNC_CHAOS_SECONDS")) {
    options.duration = std::chrono::seconds(std::stol(seconds));
  }
  return options;
}

// A catalog product as the merchant application last committed it: the fields it edits.
struct ShopVariant {
  std::string name{};
  std::string gtin{};
  std::string status{};
  double weight = 0;  // in oz
};
struct ShopProduct {
  std::string name{};
  std::string type{};
  std::map<std::string, ShopVariant> variants{};  // by SKU: "<reference>-<n>"
};

// What the merchant application did, for the checks at the end.
struct MerchantHistory {
  std::vector<std::string> orders;              // every order written, in order
  std::map<std::string, std::string> invalid;   // reference -> the reason it must be rejected with
  std::set<std::string> cancelled_at_birth;     // written already cancelled: never to be created
  std::set<std::string> cancelled_later;
  std::set<std::string> edited;                 // recipient name changed after the order was written
  std::map<std::string, std::chrono::system_clock::time_point> edited_at;  // when, once committed
  std::vector<std::string> returns;
  std::map<std::string, ShopProduct> products;  // the catalog: "CHAOS-P-<n>" -> as last committed
  int catalog_edits = 0;                        // products and variants changed after they were written
  std::vector<std::string> errors;              // statements that failed (a lock held too long)
};

// The shop's database as its application writes it, SQLite or PostgreSQL: the same rows either way
// (insert_order and insert_return of sync_fixture.hpp). A failed statement throws.
class ShopDatabase {
 public:
  virtual ~ShopDatabase() = default;
  virtual void exec(const std::string& sql) = 0;
  virtual void add_order(const std::string& reference, int n) = 0;
  virtual void add_return(const std::string& reference, int n) = 0;
  // After the server restarted (PostgreSQL): a new connection.
  virtual void reconnect() {}
};

class SqliteShop final : public ShopDatabase {
 public:
  explicit SqliteShop(const std::filesystem::path& database) : db_(database.string(), SQLite::OPEN_READWRITE) {
    db_.setBusyTimeout(5000);
  }
  void exec(const std::string& sql) override { db_.exec(sql); }
  void add_order(const std::string& reference, int n) override { insert_order(db_, reference, n); }
  void add_return(const std::string& reference, int n) override { insert_return(db_, reference, n); }

 private:
  SQLite::Database db_;
};

class PostgresShop final : public ShopDatabase {
 public:
  explicit PostgresShop(std::string conninfo) : conninfo_(std::move(conninfo)) { reconnect(); }

  void reconnect() override {
    connection_.reset(PQconnectdb(conninfo_.c_str()));
    if (PQstatus(connection_.get()) != CONNECTION_OK) {
      throw std::runtime_error(fmt::format("cannot connect: {}", PQerrorMessage(connection_.get())));
    }
    exec("SET search_path = shop");
  }

  void exec(const std::string& sql) override {
    std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(connection_.get(), sql.c_str()), &PQclear);
    const ExecStatusType status = PQresultStatus(result.get());
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      throw std::runtime_error(fmt::format("{}: {}", sql.substr(0, 60), PQresultErrorMessage(result.get())));
    }
  }

  void add_order(const std::string& reference, int n) override {
    std::string sql = fmt::format(
        "INSERT INTO fulfillsync_orders (reference_id, order_number, shipping_method, type, recipient_name, "
        "recipient_email, address1, city, state, zip_code, country) VALUES ('{0}', '#{1}', '{2}', 'DTC', "
        "'Customer {1}', 'customer{1}@example.com', '{1} Main Street', 'Austin', 'TX', '{3:05}', 'US');",
        reference, n, n % 3 == 0 ? "Express" : "Standard", 10000 + n);
    for (int line = 1; line <= 1 + n % 2; ++line) {
      const auto& [product, name] = kProducts[static_cast<std::size_t>(n + line) % kProducts.size()];
      sql += fmt::format("INSERT INTO fulfillsync_order_lines (order_reference_id, line_number, "
                         "product_reference_id, product_name, quantity) VALUES ('{}', {}, '{}', '{}', {});",
                         reference, line, product, name, 1 + (n + line) % 3);
    }
    exec(sql);
  }

  void add_return(const std::string& reference, int n) override {
    exec(fmt::format("INSERT INTO fulfillsync_returns (reference_id, fulfillment_center_id, fulfillment_center_name, "
                     "tracking_number) VALUES ('{0}', 8, 'Cicero (IL)', '1Z{1:010}');"
                     "INSERT INTO fulfillsync_return_lines (return_reference_id, line_number, inventory_id, quantity, "
                     "requested_action) VALUES ('{0}', 1, 7002, {2}, 'Restock');",
                     reference, n, 1 + n % 2));
  }

 private:
  std::string conninfo_;
  std::unique_ptr<PGconn, decltype(&PQfinish)> connection_{nullptr, &PQfinish};
};

// The shop application on its own connection: every few tens of milliseconds it writes a few orders
// (now and then one invalid, or cancelled as it is written), edits and cancels earlier ones and writes
// returns, creates and edits products and variants, each in a short transaction, until stopped.
class MerchantApplication {
 public:
  MerchantApplication(std::unique_ptr<ShopDatabase> database, std::uint64_t seed)
      : db_(std::move(database)), random_(seed) {
    thread_ = std::thread([this] { run(); });
  }
  ~MerchantApplication() { stop(); }

  void stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
  }

  // Read after stop().
  const MerchantHistory& history() const { return history_; }

  // Runs `outage` (a restart of the database server) between two of the application's transactions,
  // then connects again: a shop's writes wait for its database, and none is left half known.
  template <typename Outage>
  void while_paused(Outage outage) {
    std::lock_guard lock(writing_);
    outage();
    db_->reconnect();
  }

 private:
  void run() {
    while (!stopping_) {
      try {
        std::lock_guard lock(writing_);
        step();
      } catch (const std::exception& error) {
        history_.errors.push_back(error.what());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20 + random_() % 130));
    }
  }

  bool chance(double probability) { return std::uniform_real_distribution<double>(0, 1)(random_) < probability; }

  // A valid order written earlier that is not cancelled, if any: among the latest, as shops edit fresh orders.
  std::optional<std::string> live_order() {
    for (int attempt = 0; attempt < 10 && !history_.orders.empty(); ++attempt) {
      const std::size_t recent = std::min<std::size_t>(history_.orders.size(), 300);
      const std::string& reference = history_.orders[history_.orders.size() - 1 - random_() % recent];
      if (!history_.invalid.contains(reference) && !history_.cancelled_at_birth.contains(reference) &&
          !history_.cancelled_later.contains(reference)) {
        return reference;
      }
    }
    return std::nullopt;
  }

  void step() {
    const int count = 1 + static_cast<int>(random_() % 6);
    db_->exec("BEGIN");
    try {
      write_orders(count);
    } catch (...) {
      db_->exec("ROLLBACK");
      throw;
    }
    db_->exec("COMMIT");
    // Recorded once committed: a failed transaction wrote nothing.
    history_.orders.insert(history_.orders.end(), written_.begin(), written_.end());
    history_.invalid.insert(invalid_.begin(), invalid_.end());
    history_.cancelled_at_birth.insert(cancelled_.begin(), cancelled_.end());

    if (chance(0.3)) {
      if (const auto reference = live_order()) {
        const int n = std::stoi(reference->substr(reference->find('-') + 1));
        db_->exec(fmt::format("UPDATE fulfillsync_orders SET recipient_name = 'Customer {} (edited)' "
                              "WHERE reference_id = '{}'", n, *reference));
        history_.edited.insert(*reference);
        history_.edited_at.emplace(*reference, std::chrono::system_clock::now());
      }
    }
    if (chance(0.15)) {
      if (const auto reference = live_order()) {
        db_->exec(fmt::format("UPDATE fulfillsync_orders SET cancel_requested = 1 WHERE reference_id = '{}'",
                              *reference));
        history_.cancelled_later.insert(*reference);
      }
    }
    if (chance(0.15)) {
      const int n = static_cast<int>(history_.returns.size()) + 1;
      const std::string reference = fmt::format("CHAOS-RMA-{:05}", n);
      db_->add_return(reference, n);
      history_.returns.push_back(reference);
    }
    edit_catalog();
  }

  // Runs `sql` in one transaction: all of it or, when it throws, none.
  void commit(const std::string& sql) {
    db_->exec("BEGIN");
    try {
      db_->exec(sql);
    } catch (...) {
      db_->exec("ROLLBACK");
      throw;
    }
    db_->exec("COMMIT");
  }

  // The catalog: now and then a new product with one to four variants, a product renamed (and its
  // type changed), a variant changed (name, GTIN, status back and forth, weight) or one added; each
  // in a transaction of its own, noted once committed.
  void edit_catalog() {
    if (chance(0.08)) {
      const int n = static_cast<int>(history_.products.size()) + 1;
      const std::string reference = fmt::format("CHAOS-P-{:04}", n);
      ShopProduct product{.name = fmt::format("Chaos product {}", n), .type = "Apparel"};
      std::string sql = fmt::format("INSERT INTO fulfillsync_products (reference_id, name, type) VALUES ('{}', '{}', "
                                    "'{}');",
                                    reference, product.name, product.type);
      const int variants = 1 + static_cast<int>(random_() % 4);
      for (int j = 1; j <= variants; ++j) sql += new_variant(reference, product);
      commit(sql);
      history_.products.emplace(reference, std::move(product));
    }
    if (history_.products.empty()) return;
    const auto some_product = [&] {
      return std::next(history_.products.begin(), static_cast<long>(random_() % history_.products.size()));
    };
    if (chance(0.08)) {
      const auto product = some_product();
      const int edit = ++edits_;
      ShopProduct changed = product->second;
      changed.name = fmt::format("{} v{}", product->first, edit);
      changed.type = changed.type == "Apparel" ? "Gear" : "Apparel";
      commit(fmt::format("UPDATE fulfillsync_products SET name = '{}', type = '{}' WHERE reference_id = '{}';",
                         changed.name, changed.type, product->first));
      product->second = std::move(changed);
      ++history_.catalog_edits;
    }
    if (chance(0.1)) {
      const auto product = some_product();
      auto variant = std::next(product->second.variants.begin(),
                               static_cast<long>(random_() % product->second.variants.size()));
      const int edit = ++edits_;
      const ShopVariant changed{.name = fmt::format("{} v{}", variant->first, edit),
                                .gtin = fmt::format("{:013}", 5000000000000LL + edit),
                                .status = variant->second.status == "Active" ? "Inactive" : "Active",
                                .weight = 0.25 * (1 + edit % 40)};
      commit(fmt::format("UPDATE fulfillsync_variants SET name = '{}', gtin = '{}', status = '{}', weight = {} "
                         "WHERE sku = '{}';",
                         changed.name, changed.gtin, changed.status, changed.weight, variant->first));
      variant->second = changed;
      ++history_.catalog_edits;
    }
    if (chance(0.04)) {
      const auto product = some_product();
      ShopProduct changed = product->second;
      commit(new_variant(product->first, changed));
      product->second = std::move(changed);
      ++history_.catalog_edits;
    }
  }

  // The next variant of `product` as SQL, added to it.
  std::string new_variant(const std::string& reference, ShopProduct& product) {
    const std::string sku = fmt::format("{}-{}", reference, product.variants.size() + 1);
    const int n = ++variants_written_;
    const ShopVariant variant{.name = fmt::format("{} size {}", reference, product.variants.size() + 1),
                              .gtin = fmt::format("{:013}", 4000000000000LL + n),
                              .status = "Active",
                              .weight = 0.5 * (1 + n % 10)};
    product.variants.emplace(sku, variant);
    return fmt::format("INSERT INTO fulfillsync_variants (sku, product_reference_id, name, gtin, status, weight) "
                       "VALUES ('{}', '{}', '{}', '{}', '{}', {});",
                       sku, reference, variant.name, variant.gtin, variant.status, variant.weight);
  }

  // The orders of one transaction, noted in written_, invalid_ and cancelled_ until it commits.
  void write_orders(int count) {
    written_.clear();
    invalid_.clear();
    cancelled_.clear();
    for (int i = 0; i < count; ++i) {
      const int n = ++orders_written_;
      const std::string reference = fmt::format("CHAOS-{:06}", n);
      db_->add_order(reference, n);
      written_.push_back(reference);
      if (chance(0.01)) {
        db_->exec(fmt::format("UPDATE fulfillsync_order_lines SET quantity = 0 WHERE order_reference_id = '{}'",
                              reference));
        invalid_.emplace_back(reference, "quantity must be at least 1, found 0");
      } else if (chance(0.01)) {
        db_->exec(fmt::format("UPDATE fulfillsync_orders SET location_id = 999 WHERE reference_id = '{}'", reference));
        invalid_.emplace_back(reference, "Fulfillment center 999 does not exist");
      } else if (chance(0.03)) {
        db_->exec(
            fmt::format("UPDATE fulfillsync_orders SET cancel_requested = 1 WHERE reference_id = '{}'", reference));
        cancelled_.push_back(reference);
      }
    }
  }

  std::unique_ptr<ShopDatabase> db_;
  std::mt19937_64 random_;
  std::atomic<bool> stopping_{false};
  std::mutex writing_;  // held by a step, and by an outage
  MerchantHistory history_;
  std::vector<std::string> written_;
  std::vector<std::pair<std::string, std::string>> invalid_;
  std::vector<std::string> cancelled_;
  int orders_written_ = 0;
  int variants_written_ = 0;
  int edits_ = 0;  // catalog edits tried, committed or not: each writes values of its own
  std::thread thread_;
};

// Samples the checkpoint store's cursors and fails when one moves backwards. The window of
// pull_shipments and a change log position only ever move forward. A source cursor stays before the
// rows the daemon holds back while an earlier version of theirs is in flight, and such a row can come
// from the look-back read below the cursor: that cursor may step back, by at most the look-back.
class CheckpointWatch {
 public:
  explicit CheckpointWatch(std::filesystem::path path) : path_(std::move(path)) {}

  void sample() {
    if (!std::filesystem::exists(path_)) return;
    SQLite::Database store(path_.string(), SQLite::OPEN_READONLY);
    store.setBusyTimeout(5000);
    SQLite::Statement query(store, "SELECT job, position FROM cursors");
    while (query.executeStep()) {
      const std::string job = query.getColumn(0).getString();
      const std::string position = query.getColumn(1).getString();
      const auto [previous, added] = last_.emplace(job, position);
      if (added || previous->second == position) continue;
      if (job.starts_with("source:")) {
        EXPECT_GE(time_of_source(position) + kLookBack, time_of_source(previous->second))
            << job << " moved back from " << previous->second << " to " << position;
      } else if (job.starts_with("changes:")) {
        // Back to a catch-up, a read by updated_at from the saved read position: a store restored
        // from an older copy, whose changes the log has deleted since.
        if (!position.starts_with(kCatchUp)) {
          EXPECT_GE(sequence_of(position), sequence_of(previous->second))
              << job << " moved back from " << previous->second << " to " << position;
        }
      } else if (job.starts_with("catch-up:") && position.empty()) {
        // A new catch-up starts from the first key (it reads everything again: nothing is skipped),
        // e.g. after a restored store finds the change log deleted what it had not read.
      } else {
        EXPECT_GT(position, previous->second) << job << " moved back";
      }
      previous->second = position;
      ++moves_;
    }
  }

  int moves() const { return moves_; }
  // The store was replaced by an older copy: its cursors are older, by design.
  void forget() { last_.clear(); }

 private:
  // A change log position is the log's sequence number, "catch-up " before it while rows changed
  // before the log are still read by updated_at.
  static constexpr std::string_view kCatchUp = "catch-up ";
  static long long sequence_of(std::string position) {
    if (position.starts_with(kCatchUp)) position.erase(0, kCatchUp.size());
    return position.empty() ? 0 : std::stoll(position);
  }

  // A source cursor is "<length>:<updated_at><reference_id>".
  static timestamps::TimePoint time_of_source(const std::string& position) {
    const std::size_t colon = position.find(':');
    const std::size_t length = std::stoul(position.substr(0, colon));
    const auto when = timestamps::parse_iso8601(position.substr(colon + 1, length));
    EXPECT_TRUE(when.has_value()) << position;
    return when.value_or(timestamps::TimePoint{});
  }

  std::filesystem::path path_;
  std::map<std::string, std::string> last_;
  int moves_ = 0;
};

class ChaosTest : public SyncFixture {
 protected:
  void TearDown() override {
    if (!HasFailure()) return;
    try {
      keep_evidence();
    } catch (const std::exception& error) {
      std::cout << "chaos: the evidence of the failure could not all be kept: " << error.what() << "\n";
    }
  }

  // A failed run: its files copied where they outlive the test, and what they say of each order,
  // return or product a failure names printed with the failure.
  void keep_evidence() {
    const std::vector<std::string> named = named_in_failures();
    if (sandbox) {
      write_file(dir / "sandbox-orders.json", sandbox->admin("GET", "/_sandbox/orders").body);
      write_file(dir / "sandbox-stats.json", sandbox->admin("GET", "/_sandbox/stats").body);
    }
    if (postgres) {
      write_file(dir / "postgresql.log", postgres->log());
      copy_postgres_tables("shop");  // the source tables too, beside the result tables
      copy_result_tables();
    }
    const char* keep = std::getenv("FULFILLSYNC_CHAOS_KEEP");
    const std::filesystem::path base = keep != nullptr
                                           ? std::filesystem::path(keep)
                                           : binary_path("fulfillsyncd").parent_path().parent_path() / "chaos-failures";
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::filesystem::path kept = base / fmt::format("{}-seed-{}", test->name(), seed_);
    for (int n = 2; std::filesystem::exists(kept); ++n) {
      kept = base / fmt::format("{}-seed-{}-{}", test->name(), seed_, n);
    }
    std::filesystem::create_directories(kept);
    std::filesystem::copy(dir.path(), kept, std::filesystem::copy_options::recursive);
    std::cout << "chaos: the failed run's databases and logs are kept in " << kept.string() << "\n";
    constexpr std::size_t kShown = 5;
    for (std::size_t i = 0; i < named.size() && i < kShown; ++i) print_evidence(named[i]);
    if (named.size() > kShown) std::cout << "chaos: (and " << named.size() - kShown << " more named by failures)\n";
  }

  // The orders, returns and products the failures name (their traces carry the reference), in order.
  static std::vector<std::string> named_in_failures() {
    static const std::regex kReference(R"(CHAOS-(?:RMA-|P-)?\d+)");
    std::vector<std::string> named;
    const ::testing::TestResult* result = ::testing::UnitTest::GetInstance()->current_test_info()->result();
    for (int i = 0; i < result->total_part_count(); ++i) {
      const std::string message = result->GetTestPartResult(i).message();
      const auto end = std::sregex_iterator();
      for (auto match = std::sregex_iterator(message.begin(), message.end(), kReference); match != end; ++match) {
        if (std::find(named.begin(), named.end(), match->str()) == named.end()) named.push_back(match->str());
      }
    }
    return named;
  }

  // What each side holds of `reference`, and the last daemon log lines and sandbox requests naming it
  // (or its id at the provider).
  void print_evidence(const std::string& reference) {
    const bool is_return = reference.starts_with("CHAOS-RMA-"), is_product = reference.starts_with("CHAOS-P-");
    const std::string table = is_return    ? "fulfillsync_return_sync"
                              : is_product ? "fulfillsync_product_sync"
                                           : "fulfillsync_order_sync";
    std::cout << "chaos: ---- " << reference << " ----\n";
    std::string remote_id;
    const auto rows = [&](const std::string& sql) {
      SQLite::Statement query(*merchant, sql);
      query.bind(1, reference);
      while (query.executeStep()) {
        std::vector<std::string> fields;
        for (int c = 0; c < query.getColumnCount(); ++c) {
          fields.push_back(fmt::format("{}={}", query.getColumnName(c), query.getColumn(c).getString()));
          if (std::string_view(query.getColumnName(c)) == "remote_id") remote_id = query.getColumn(c).getString();
        }
        std::cout << "  merchant: " << fmt::format("{}", fmt::join(fields, " ")) << "\n";
      }
    };
    try {
      rows(fmt::format("SELECT * FROM {} WHERE reference_id = ?", table));
      if (!is_return && !is_product) {
        rows("SELECT shipment_id, status, last_update_at, synced_at FROM fulfillsync_shipments "
             "WHERE order_reference_id = ?");
      }
    } catch (const std::exception& error) {
      std::cout << "  merchant: " << error.what() << "\n";
    }
    if (!is_return && !is_product && std::filesystem::exists(dir / "sandbox-orders.json")) {
      simdjson::dom::parser parser;
      simdjson::dom::element orders;
      if (parser.load((dir / "sandbox-orders.json").string()).get(orders) == simdjson::SUCCESS && orders.is_array()) {
        for (simdjson::dom::element order : orders.get_array()) {
          std::string_view text;
          if (order["reference_id"].get_string().get(text) == simdjson::SUCCESS && text == reference) {
            std::cout << "  sandbox: " << simdjson::to_string(order) << "\n";
          }
        }
      }
    }
    const auto names_it = [&](std::string_view line) {
      if (line.find(reference) != std::string_view::npos) return true;
      if (remote_id.empty()) return false;
      for (std::size_t at = line.find(remote_id); at != std::string_view::npos; at = line.find(remote_id, at + 1)) {
        const auto digit = [&](std::size_t i) {
          return i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) != 0;
        };
        if ((at == 0 || !digit(at - 1)) && !digit(at + remote_id.size())) return true;
      }
      return false;
    };
    constexpr std::size_t kLines = 15;
    std::vector<std::string> lines;
    std::ifstream log(dir / "fulfillsyncd.log");
    for (std::string line; std::getline(log, line);) {
      if (line.starts_with("=====") || names_it(line)) lines.push_back(line);
    }
    // The run markers only where they separate lines that name it.
    std::vector<std::string> shown;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (!lines[i].starts_with("=====") || (i + 1 < lines.size() && !lines[i + 1].starts_with("====="))) {
        shown.push_back(lines[i]);
      }
    }
    std::cout << "  fulfillsyncd.log, the last lines naming it:\n";
    for (std::size_t i = shown.size() > kLines ? shown.size() - kLines : 0; i < shown.size(); ++i) {
      std::cout << "    " << shown[i] << "\n";
    }
    try {
      SQLite::Database journal((dir / "sandbox.db").string(), SQLite::OPEN_READONLY);
      SQLite::Statement query(journal,
                              "SELECT at_ns, method, target, substr(CAST(body AS TEXT), 1, 160) FROM journal WHERE "
                              "instr(CAST(body AS TEXT), ?1) > 0 OR (?2 <> '' AND instr(target, '/' || ?2) > 0) "
                              "ORDER BY seq DESC LIMIT 8");
      query.bind(1, reference);
      query.bind(2, remote_id);
      std::vector<std::string> requests;
      while (query.executeStep()) {
        const timestamps::TimePoint at{std::chrono::duration_cast<timestamps::TimePoint::duration>(
            std::chrono::nanoseconds(query.getColumn(0).getInt64()))};
        requests.push_back(fmt::format("{} {} {} {}", timestamps::format_iso8601_z(at), query.getColumn(1).getString(),
                                       query.getColumn(2).getString(), query.getColumn(3).getString()));
      }
      std::cout << "  sandbox journal, the last requests naming it (simulated time):\n";
      for (auto it = requests.rbegin(); it != requests.rend(); ++it) std::cout << "    " << *it << "\n";
    } catch (const std::exception& error) {
      std::cout << "  sandbox journal: " << error.what() << "\n";
    }
  }

  std::vector<std::string> sandbox_args(bool faults, std::uint64_t fault_seed, std::string_view clock_speed) const {
    std::vector<std::string> args = {"--state", (dir / "sandbox.db").string(), "--clock-speed",
                                     std::string(clock_speed)};
    if (faults) {
      args.insert(args.end(), {"--faults", std::string(kFaultMix), "--fault-seed", std::to_string(fault_seed)});
    }
    return args;
  }

  // SIGKILL, then a new process on the same port replaying the state file. The provider's clock
  // goes on from where it was: what the daemon keeps by `last_update_at` relies on it.
  void restart_sandbox(std::vector<std::string> args) {
    const std::uint16_t port = sandbox->port();
    remember_stats();
    const timestamps::TimePoint before = sandbox_now();
    sandbox->process().send_signal(SIGKILL);
    ASSERT_EQ(sandbox->process().wait_for_exit(10s), kKilled);
    sandbox.reset();
    sandbox = std::make_unique<Sandbox>(std::move(args), port);
    EXPECT_GE(sandbox_now(), before) << "the sandbox's clock went back across its restart";
  }

  // The sandbox's simulated now.
  timestamps::TimePoint sandbox_now() {
    const std::string body = sandbox->admin("GET", "/_sandbox/clock").body;
    simdjson::dom::parser parser;
    std::string_view now;
    EXPECT_EQ(parser.parse(simdjson::padded_string(body))["now"].get_string().get(now), simdjson::SUCCESS) << body;
    const auto parsed = timestamps::parse_iso8601(now);
    EXPECT_TRUE(parsed.has_value()) << body;
    return parsed.value_or(timestamps::TimePoint{});
  }

  // The sandbox's counts start at zero with each process: what the one about to go saw is added up.
  void remember_stats() {
    for (const char* name : {"duplicates_refused", "drop_after", "requests_total"}) {
      totals_[name] += sandbox_count(name);
    }
  }

  // A product as the provider lists it, with the fields the merchant application edits.
  struct ProviderProduct {
    std::int64_t id = 0;
    std::string name{};
    std::string type{};
    std::map<std::string, std::vector<ShopVariant>> variants{};  // by SKU: more than one is a duplicate
  };

  // The provider's products of the merchant application's catalog by reference, the prefix of their
  // SKUs ("CHAOS-P-0001-2"): more than one for a reference is a product created twice.
  std::map<std::string, std::vector<ProviderProduct>> provider_catalog() {
    std::map<std::string, std::vector<ProviderProduct>> catalog;
    simdjson::dom::parser parser;
    const auto text = [](simdjson::dom::element element, std::string_view key) {
      std::string_view value;
      return element[key].get_string().get(value) == simdjson::SUCCESS ? std::string(value) : std::string();
    };
    for (int cursor = 1;; ++cursor) {
      const auto response = api_get(fmt::format("/product?Limit=250&Cursor={}", cursor));
      EXPECT_EQ(response.status, 200) << response.body;
      simdjson::dom::element page;
      simdjson::dom::array items;
      if (response.status != 200 ||
          parser.parse(simdjson::padded_string(response.body)).get(page) != simdjson::SUCCESS ||
          page["items"].get_array().get(items) != simdjson::SUCCESS || items.size() == 0) {
        break;
      }
      for (simdjson::dom::element item : items) {
        ProviderProduct product{.id = item["id"].get_int64().value_unsafe(),
                                .name = text(item, "name"),
                                .type = text(item, "type")};
        std::string reference;
        simdjson::dom::array variants;
        EXPECT_EQ(item["variants"].get_array().get(variants), simdjson::SUCCESS);
        for (simdjson::dom::element v : variants) {
          const std::string sku = text(v, "sku");
          if (sku.starts_with("CHAOS-P-")) reference = sku.substr(0, sku.rfind('-'));
          double weight = 0;
          if (v["weight"]["weight"].get_double().get(weight) != simdjson::SUCCESS) weight = 0;
          product.variants[sku].push_back(
              {.name = text(v, "name"), .gtin = text(v, "gtin"), .status = text(v, "status"), .weight = weight});
        }
        if (!reference.empty()) catalog[reference].push_back(std::move(product));
      }
      std::string_view next;
      if (page["next"].get_string().get(next) != simdjson::SUCCESS || next.empty()) break;
    }
    return catalog;
  }

  // Each daemon's log, one after the other, for a failure's evidence (keep_evidence).
  void keep_daemon_log(const ChildProcess& daemon, int run, const std::string& failpoint) {
    std::ofstream log(dir / "fulfillsyncd.log", std::ios::app);
    log << fmt::format("===== run {}{}\n", run, failpoint.empty() ? "" : " (failpoint " + failpoint + ")")
        << daemon.stderr_text();
  }

  // When the order's create last left, from the checkpoint store's ledger (the store's UTC clock).
  std::optional<std::chrono::system_clock::time_point> ledger_sent_at(const std::string& reference) {
    SQLite::Database store((dir / "checkpoint.db").string(), SQLite::OPEN_READONLY);
    SQLite::Statement query(store, "SELECT sent_at FROM outbound_ledger WHERE kind = 'order_create' AND "
                                   "source_key = ? AND sent_at IS NOT NULL");
    query.bind(1, reference);
    if (!query.executeStep()) return std::nullopt;
    const auto parsed = timestamps::parse_iso8601(query.getColumn(0).getString());
    if (!parsed) return std::nullopt;
    return std::chrono::time_point_cast<std::chrono::system_clock::duration>(*parsed);
  }

  // Between kills, in the mode that restores older copies of the store.
  struct StoreCopies {
    bool enabled = false;
    bool have_copy = false;
    int taken = 0;
    int restored = 0;
  };
  void copy_or_restore_store(StoreCopies& copies, std::mt19937_64& random) {
    if (!copies.enabled) return;
    const std::filesystem::path store = dir / "checkpoint.db";
    const std::filesystem::path copy = dir / "checkpoint-copy.db";
    const auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(random) < p; };
    if (copies.have_copy && chance(0.25)) {
      for (const char* side : {"-wal", "-shm"}) std::filesystem::remove(store.string() + side);
      std::filesystem::copy_file(copy, store, std::filesystem::copy_options::overwrite_existing);
      ++copies.restored;
      std::ofstream(dir / "fulfillsyncd.log", std::ios::app) << "===== an older copy of the store restored\n";
    } else if (std::filesystem::exists(store) && (!copies.have_copy || chance(0.2))) {
      std::filesystem::remove(copy);
      SQLite::Database source(store.string(), SQLite::OPEN_READONLY);
      source.backup(copy.c_str(), SQLite::Database::Save);
      copies.have_copy = true;
      ++copies.taken;
      std::ofstream(dir / "fulfillsyncd.log", std::ios::app) << "===== the store copied\n";
    }
  }

  // PostgreSQL mode: the server, with the reference source tables and their change order in schema
  // `shop`, and the configuration pointing at it.
  void start_postgres() {
    postgres = std::make_unique<PostgresServer>();
    PostgresShop setup(postgres->connection_string());
    setup.exec(fmt::format("CREATE SCHEMA shop; SET search_path = shop; {} {}",
                           read_file(source_path("schema/merchant/postgresql/source_tables.sql")),
                           read_file(source_path("schema/merchant/postgresql/change_order/0001_change_xid.sql"))));
    setup.exec(read_file(source_path("schema/merchant/postgresql/catalog_change_order.sql")));
    std::string config = read_file(config_path);
    const std::string sqlite = fmt::format("  sqlite:\n    path: {}\n", (dir / "merchant.db").string());
    config.replace(config.find(sqlite), sqlite.size(),
                   fmt::format("  driver: postgresql\n  postgresql:\n    connection: \"{}\"\n"
                               "    source_schema: shop\n    result_schema: fulfillsync\n",
                               postgres->connection_string()));
    write_file(config_path, config);
  }

  // PostgreSQL mode: the result tables as the daemon wrote them, copied (as text, NULL kept) into the
  // SQLite file that the fixture's checks read (result_column, merchant_shipments). Nothing else.
  void copy_result_tables() { copy_postgres_tables("fulfillsync"); }

  // The tables of `schema`, each replacing the SQLite table of its name.
  void copy_postgres_tables(const std::string& schema) {
    if (!postgres) return;
    std::unique_ptr<PGconn, decltype(&PQfinish)> pg(PQconnectdb(postgres->connection_string().c_str()), &PQfinish);
    ASSERT_EQ(PQstatus(pg.get()), CONNECTION_OK) << PQerrorMessage(pg.get());
    const auto query = [&](const std::string& sql) {
      std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(pg.get(), sql.c_str()), &PQclear);
      EXPECT_EQ(PQresultStatus(result.get()), PGRES_TUPLES_OK) << sql << ": " << PQresultErrorMessage(result.get());
      return result;
    };
    const auto tables = query(fmt::format("SELECT tablename FROM pg_tables WHERE schemaname = '{}'", schema));
    SQLite::Transaction transaction(*merchant);
    for (int t = 0; t < PQntuples(tables.get()); ++t) {
      const std::string table = PQgetvalue(tables.get(), t, 0);
      const auto rows = query(fmt::format(R"(SELECT * FROM {}."{}")", schema, table));
      std::vector<std::string> columns, marks;
      for (int c = 0; c < PQnfields(rows.get()); ++c) {
        columns.push_back(fmt::format(R"("{}")", PQfname(rows.get(), c)));
        marks.push_back("?");
      }
      merchant->exec(fmt::format(R"(DROP TABLE IF EXISTS "{}")", table));
      merchant->exec(fmt::format(R"(CREATE TABLE "{}" ({}))", table, fmt::join(columns, ", ")));
      SQLite::Statement insert(*merchant,
                               fmt::format(R"(INSERT INTO "{}" VALUES ({}))", table, fmt::join(marks, ", ")));
      for (int r = 0; r < PQntuples(rows.get()); ++r) {
        insert.reset();
        for (int c = 0; c < PQnfields(rows.get()); ++c) {
          if (PQgetisnull(rows.get(), r, c)) {
            insert.bind(c + 1);
          } else {
            insert.bind(c + 1, std::string(PQgetvalue(rows.get(), r, c)));
          }
        }
        insert.exec();
      }
    }
    transaction.commit();
  }

  enum class Mode {
    plain,
    restore_older_stores,  // older copies of the checkpoint store put back between kills
    postgresql,            // the merchant database in PostgreSQL, its server restarted mid-run
  };
  void run_chaos(Mode mode);

  std::map<std::string, long> totals_;
  std::unique_ptr<PostgresServer> postgres;
  std::uint64_t seed_ = 0;  // the run's, for the directory its evidence is kept in
};

TEST_F(ChaosTest, NothingIsLostOrDuplicatedThroughFaultsKillsAndProviderRestarts) { run_chaos(Mode::plain); }

TEST_F(ChaosTest, OlderStoreCopiesRestoredBetweenKills) { run_chaos(Mode::restore_older_stores); }

TEST_F(ChaosTest, PostgresServerRestartedMidRun) {
  if (auto why = PostgresServer::unavailable()) GTEST_SKIP() << *why;
  run_chaos(Mode::postgresql);
}

void ChaosTest::run_chaos(Mode mode) {
  const bool restore_older_stores = mode == Mode::restore_older_stores;
  const ChaosOptions options = chaos_options(mode == Mode::plain                  ? kDefaultDuration
                                             : mode == Mode::restore_older_stores ? kRestoringDuration
                                                                                  : kPostgresDuration);
  const std::string replay = fmt::format("chaos seed {} (FULFILLSYNC_CHAOS_SEED={} replays its choices)", options.seed,
                                         options.seed);
  std::cout << replay << ", " << options.duration.count() << " s\n";
  seed_ = options.seed;
  SCOPED_TRACE(replay);
  std::mt19937_64 random(options.seed);
  const auto uniform = [&](double low, double high) {
    return std::uniform_real_distribution<double>(low, high)(random);
  };

  start_sandbox(sandbox_args(true, options.seed, "60"));
  // The daemons' logs are kept with the databases (fulfillsyncd.log), in detail, for a failure's evidence.
  write_config("logging:\n  level: debug\n", kJobs, fmt::format("  look_back: {}s\n", kLookBack.count()));

  std::unique_ptr<ShopDatabase> shop_database;
  if (mode == Mode::postgresql) {
    start_postgres();
    shop_database = std::make_unique<PostgresShop>(postgres->connection_string());
  } else {
    merchant->exec(read_file(source_path("schema/merchant/catalog_change_log.sql")));
    shop_database = std::make_unique<SqliteShop>(dir / "merchant.db");
  }
  MerchantApplication shop(std::move(shop_database), options.seed + 1);
  CheckpointWatch checkpoints(dir / "checkpoint.db");
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + options.duration;
  // Moments spread over the run, for `count` restarts.
  const auto moments = [&](int count) {
    std::vector<std::chrono::steady_clock::time_point> at;
    for (int i = 0; i < count; ++i) {
      at.push_back(start + std::chrono::milliseconds(static_cast<long>(
                               uniform(0.1, 0.9) * std::chrono::milliseconds(options.duration).count())));
    }
    std::sort(at.begin(), at.end());
    return at;
  };
  const auto sandbox_kills = moments(kSandboxRestarts);
  const auto postgres_restart_at = moments(mode == Mode::postgresql ? kPostgresRestarts : 0);

  int daemon_kills = 0, failpoint_deaths = 0, sandbox_restarts = 0, clock_jumps = 0, postgres_restarts = 0,
      start_failures = 0;
  StoreCopies copies{.enabled = restore_older_stores};
  while (std::chrono::steady_clock::now() < deadline && !HasFatalFailure()) {
    std::string failpoint;
    if (uniform(0, 1) < 0.25) {
      failpoint = fmt::format("{}@{}", daemon::kFailpoints[random() % daemon::kFailpoints.size()], 1 + random() % 3);
    }
    auto running = run_in_background(failpoint);
    const int postgres_restarts_before = postgres_restarts;
    const auto kill_at =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long>(uniform(300, 5000)));
    while (std::chrono::steady_clock::now() < kill_at && running->running()) {
      if (sandbox_restarts < kSandboxRestarts && std::chrono::steady_clock::now() >= sandbox_kills[sandbox_restarts]) {
        ++sandbox_restarts;
        restart_sandbox(sandbox_args(true, options.seed + sandbox_restarts, "60"));
      }
      if (postgres_restarts < static_cast<int>(postgres_restart_at.size()) &&
          std::chrono::steady_clock::now() >= postgres_restart_at[postgres_restarts]) {
        // The daemon runs on: its connections are closed under it, and it opens them again.
        ++postgres_restarts;
        shop.while_paused([&] { postgres->restart(); });
        std::ofstream(dir / "fulfillsyncd.log", std::ios::app) << "===== the PostgreSQL server restarted\n";
      }
      if (uniform(0, 1) < 0.01) {
        // Hours pass: shipments go in transit and are delivered, returns arrive and are processed.
        ASSERT_EQ(sandbox->admin("POST", "/_sandbox/clock/advance?seconds=7200").status, 200);
        ++clock_jumps;
      }
      std::this_thread::sleep_for(100ms);
    }
    running->send_signal(SIGKILL);
    const auto status = running->wait_for_exit(10s);
    // A server that goes away while the daemon starts ends the start with 69, as README's exit codes
    // say; systemd starts it again (Restart=on-failure), as the next round does here.
    if (status == daemon::exit_code::unavailable && postgres_restarts > postgres_restarts_before &&
        running->stderr_text().find("cannot start: merchant database postgresql") != std::string::npos) {
      ++start_failures;
    } else {
      ASSERT_EQ(status, kKilled) << "fulfillsyncd ended by itself"
                                 << (failpoint.empty() ? "" : " (failpoint " + failpoint + ")") << ":\n"
                                 << running->stderr_text();
    }
    if ((running->stdout_text() + running->stderr_text()).find("killing the process") != std::string::npos) {
      ++failpoint_deaths;
    }
    keep_daemon_log(*running, daemon_kills, failpoint);
    ++daemon_kills;
    // The daemon is down: what the provider shows marked must be in the merchant database already.
    // (Once the daemon has made its result tables: a run killed early in its first start, as a
    // sanitized one can be, had not yet, and had marked nothing.)
    copy_result_tables();
    if (count("SELECT count(*) FROM sqlite_master WHERE name = 'fulfillsync_shipments'") > 0) {
      expect_no_mark_without_merchant_tracking();
    }
    checkpoints.sample();
    const int restored = copies.restored;
    copy_or_restore_store(copies, random);
    if (copies.restored != restored) checkpoints.forget();
  }
  shop.stop();
  const MerchantHistory& history = shop.history();
  EXPECT_THAT(history.errors, ::testing::IsEmpty()) << "the merchant application could not write";

  // Settling: the faults stop and the clock runs at its real pace. Twice, the clock jumps half an hour,
  // past every shipment's steps to the carrier's scan (whose next step is an hour away), and the daemon
  // runs until it has no work left. The second time ships what it sent during the first, so that
  // nothing at the provider moves on between the daemon's last pull and the checks.
  restart_sandbox(sandbox_args(false, 0, "1"));
  const int expected_exit = history.invalid.empty() ? 0 : kRowsStayRejected;
  for (int jump = 0; jump < 2; ++jump) {
    ASSERT_EQ(sandbox->admin("POST", "/_sandbox/clock/advance?seconds=1800").status, 200);
    RunResult settled{kWorkLeft, "", ""};
    for (int round = 0; round < 10 && settled.exit_status == kWorkLeft; ++round) settled = once();
    ASSERT_EQ(settled.exit_status, expected_exit) << settled.stdout_text << settled.stderr_text;
  }
  checkpoints.sample();
  remember_stats();
  copy_result_tables();

  std::cout << fmt::format("chaos: {} orders ({} invalid, {} cancelled as written, {} cancelled later, {} edited), "
                           "{} returns, {} products ({} catalog edits); fulfillsyncd killed {} times ({} at a "
                           "failpoint), sandbox restarted {} times, "
                           "clock jumped {} times; checkpoints moved {} times; sandbox: {} requests, {} answers "
                           "dropped after processing, {} duplicate creates refused\n",
                           history.orders.size(), history.invalid.size(), history.cancelled_at_birth.size(),
                           history.cancelled_later.size(), history.edited.size(), history.returns.size(),
                           history.products.size(), history.catalog_edits, daemon_kills,
                           failpoint_deaths, sandbox_restarts, clock_jumps, checkpoints.moves(),
                           totals_["requests_total"], totals_["drop_after"], totals_["duplicates_refused"]);
  if (restore_older_stores) {
    std::cout << fmt::format("chaos: the checkpoint store copied {} times, an older copy restored {} times\n",
                             copies.taken, copies.restored);
    EXPECT_GT(copies.restored, 0) << "the run was too short to restore an older store";
    // Sends a store since replaced made are in the result tables (in flight, before they left): the
    // older copy looks them up rather than sending them again.
    EXPECT_EQ(totals_["duplicates_refused"], 0) << "creates refused as duplicates after a restore";
  }
  EXPECT_EQ(sandbox_restarts, kSandboxRestarts) << "the run was too short for every sandbox restart";
  if (mode == Mode::postgresql) {
    std::cout << fmt::format("chaos: the PostgreSQL server restarted {} times; {} starts ended by it (69)\n",
                             postgres_restarts, start_failures);
    EXPECT_EQ(postgres_restarts, kPostgresRestarts) << "the run was too short for every server restart";
  }
  EXPECT_GT(daemon_kills, 10);

  // Orders: each eligible one exists once at the provider as the merchant last wrote it before it
  // was sent; no other exists there; each cancel is applied or refused by the provider with its reason.
  const auto provider = provider_orders();  // fails on a reference id listed twice
  const auto cancels = cancels_processed();
  std::size_t expected_at_provider = 0;
  for (const std::string& reference : history.orders) {
    SCOPED_TRACE(reference);
    const auto found = provider.find(reference);
    const std::string state = result_column("state", reference);
    if (const auto invalid = history.invalid.find(reference); invalid != history.invalid.end()) {
      EXPECT_EQ(found, provider.end());
      EXPECT_EQ(state, "rejected");
      // The reason as the provider gave it, or its answer as a malformed-body fault left it.
      EXPECT_THAT(result_column("last_error", reference),
                  AnyOf(HasSubstr(invalid->second), HasSubstr("upstream error")));
      continue;
    }
    if (history.cancelled_at_birth.contains(reference)) {
      EXPECT_EQ(found, provider.end()) << "an order cancelled before it could be read was created";
      EXPECT_EQ(state, "cancelled");
      EXPECT_THAT(result_column("note", reference), HasSubstr("never sent"));
      continue;
    }
    if (history.cancelled_later.contains(reference) && found == provider.end()) {
      EXPECT_EQ(state, "cancelled");
      EXPECT_THAT(result_column("note", reference), HasSubstr("never sent"));
      continue;
    }
    ++expected_at_provider;
    if (found == provider.end()) {
      ADD_FAILURE() << "missing at the provider";
      continue;
    }
    const api::Order& order = found->second;
    EXPECT_EQ(result_column("remote_id", reference), std::to_string(order.id));
    if (history.cancelled_later.contains(reference)) {
      if (order.status == "Cancelled") {
        EXPECT_EQ(state, "cancelled");
      } else {
        EXPECT_EQ(state, "cancel_rejected") << "a cancel neither applied nor refused";
        EXPECT_THAT(result_column("last_error", reference), HasSubstr("has already shipped"));
      }
    } else {
      EXPECT_NE(order.status, "Cancelled");
      EXPECT_EQ(state, "created");
    }
    EXPECT_NE(result_column("remote_created_at", reference), "");
    // One processed cancel per order cancelled at the provider, none for a refused one.
    EXPECT_EQ(cancels.at(reference), order.status == "Cancelled" ? 1 : 0);
    const int n = std::stoi(reference.substr(reference.find('-') + 1));
    ASSERT_TRUE(order.recipient.has_value());
    const std::string first = fmt::format("Customer {}", n);
    if (history.edited.contains(reference)) {
      EXPECT_THAT(order.recipient->name, AnyOf(first, first + " (edited)"));
      // A version written a request timeout before the send that created the order is what it carries.
      // With older stores restored, the send that created the order may be one the ledger forgot;
      // its result then says so.
      const bool earlier_send =
          result_column("note", reference).find("created at the provider by an earlier send") != std::string::npos;
      const auto sent = ledger_sent_at(reference);
      if (sent && !earlier_send && *sent - history.edited_at.at(reference) > kRequestTimeout) {
        EXPECT_EQ(order.recipient->name, first + " (edited)") << "sent without the merchant's edit";
      }
      // An edit that came too late is reported, unless a cancel superseded it (then the cancel's
      // refusal, the order having shipped, says how it went out).
      if (order.recipient->name == first && !history.cancelled_later.contains(reference)) {
        EXPECT_THAT(result_column("note", reference),
                    AnyOf(HasSubstr("changed at the merchant after it was sent"),
                          HasSubstr("created at the provider by an earlier send")));
      }
    } else {
      EXPECT_EQ(order.recipient->name, first);
    }
  }
  EXPECT_EQ(provider.size(), expected_at_provider) << "the provider has orders the merchant never wrote";

  // Returns: each exists once at the provider.
  const auto returns = provider_returns();  // fails on a reference id listed twice
  EXPECT_EQ(returns.size(), history.returns.size());
  for (const std::string& reference : history.returns) {
    const auto found = returns.find(reference);
    if (found == returns.end()) {
      ADD_FAILURE() << "return " << reference << " is missing at the provider";
      continue;
    }
    EXPECT_EQ(result_column("state", reference, "fulfillsync_return_sync"), "created") << reference;
    EXPECT_EQ(result_column("remote_id", reference, "fulfillsync_return_sync"), std::to_string(found->second.id))
        << reference;
  }

  // Shipments: every one in the merchant database as the provider has it, each with tracking
  // marked uploaded exactly once (a restored store drops the marks the merchant's rows show done),
  // and never before the merchant database held it.
  expect_shipments_synced(sandbox_shipments().size());
  expect_no_mark_without_merchant_tracking();

  // The catalog: each product exists once at the provider with the merchant's last version of every
  // field it edits, each of its variants once, and none the merchant never wrote; the result table
  // holds its id.
  const auto catalog = provider_catalog();
  for (const auto& [reference, written_product] : history.products) {
    SCOPED_TRACE(reference);
    const auto found = catalog.find(reference);
    if (found == catalog.end()) {
      ADD_FAILURE() << "product missing at the provider";
      continue;
    }
    EXPECT_EQ(found->second.size(), 1u) << "product created more than once";
    const ProviderProduct& product = found->second.front();
    EXPECT_EQ(product.name, written_product.name);
    EXPECT_EQ(product.type, written_product.type);
    EXPECT_EQ(result_column("state", reference, "fulfillsync_product_sync"), "created");
    EXPECT_EQ(result_column("remote_id", reference, "fulfillsync_product_sync"), std::to_string(product.id));
    EXPECT_EQ(product.variants.size(), written_product.variants.size())
        << "the provider has variants the merchant never wrote";
    for (const auto& [sku, written] : written_product.variants) {
      SCOPED_TRACE(sku);
      const auto variant = product.variants.find(sku);
      if (variant == product.variants.end()) {
        ADD_FAILURE() << "variant missing at the provider";
        continue;
      }
      EXPECT_EQ(variant->second.size(), 1u) << "variant created more than once";
      const ShopVariant& listed = variant->second.front();
      EXPECT_EQ(listed.name, written.name);
      EXPECT_EQ(listed.gtin, written.gtin);
      EXPECT_EQ(listed.status, written.status);
      EXPECT_DOUBLE_EQ(listed.weight, written.weight);
    }
  }
  EXPECT_EQ(catalog.size(), history.products.size()) << "the provider has products the merchant never wrote";
}

}  // namespace
}  // namespace fulfillsync::testing
