#include "service/merchant_database_metrics.hpp"

#include <spdlog/spdlog.h>

namespace fulfillsync::daemon {

MerchantDatabaseMetrics::MerchantDatabaseMetrics(prometheus::Registry& registry)
    : errors_(prometheus::BuildCounter()
                  .Name("fulfillsync_merchant_database_errors_total")
                  .Help("Failures of the merchant database, by kind: connection_lost (a server restart, the "
                        "network), unreachable (the connection could not be opened again), statement_timeout, "
                        "read_only (a write refused by a read-only replica or a server in recovery), "
                        "permission_denied (a privilege the daemon's role lacks), other. "
                        "Those the connection retried by itself are counted too.")
                  .Register(registry)),
      reopens_(prometheus::BuildCounter()
                   .Name("fulfillsync_merchant_database_reopens_total")
                   .Help("Times the connection to the merchant database was opened again after it was lost (or dropped "
                         "after a write refused as read only, to reach a writable server).")
                   .Register(registry)
                   .Add({})),
      oldest_age_(prometheus::BuildGauge()
                      .Name("fulfillsync_merchant_oldest_transaction_age_seconds")
                      .Help("How long the oldest transaction of another session in the merchant database has been "
                            "open (0: none), while the source is read by updated_at; absent while the daemon's "
                            "role cannot see other roles' transactions (pg_read_all_stats).")
                      .Register(registry)),
      oldest_visible_(prometheus::BuildGauge()
                          .Name("fulfillsync_merchant_oldest_transaction_visible")
                          .Help("1 while the daemon's role sees every session's transactions in pg_stat_activity, "
                                "0 while other roles' are hidden from it (GRANT pg_read_all_stats).")
                          .Register(registry)),
      look_back_(prometheus::BuildGauge()
                     .Name("fulfillsync_merchant_look_back_seconds")
                     .Help("merchant.look_back, while the source is read by updated_at: a transaction open longer "
                           "may commit rows that are never read.")
                     .Register(registry)) {
  for (const auto failure : {merchant::DatabaseFailure::connection_lost, merchant::DatabaseFailure::unreachable,
                             merchant::DatabaseFailure::statement_timeout, merchant::DatabaseFailure::read_only,
                             merchant::DatabaseFailure::permission_denied, merchant::DatabaseFailure::other}) {
    errors_.Add({{"kind", std::string(merchant::to_string(failure))}});
  }
}

void MerchantDatabaseMetrics::failed(merchant::DatabaseFailure failure) {
  errors_.Add({{"kind", std::string(merchant::to_string(failure))}}).Increment();
}

void MerchantDatabaseMetrics::reopened() { reopens_.Increment(); }

void MerchantDatabaseMetrics::note_oldest_transaction(const merchant::OldestTransaction& oldest,
                                                      config::Duration look_back) {
  look_back_.Add({}).Set(std::chrono::duration<double>(look_back).count());
  oldest_visible_.Add({}).Set(oldest.visible ? 1 : 0);
  if (!oldest.visible) {
    forget_age();
    if (!warned_invisible_) {
      spdlog::warn("merchant database: the daemon's role cannot see other roles' transactions, so the age of the "
                   "oldest open transaction is not known (GRANT pg_read_all_stats TO the role; "
                   "schema/merchant/README.md)");
    }
    warned_invisible_ = true;
    return;
  }
  warned_invisible_ = false;
  oldest_age_.Add({}).Set(std::chrono::duration<double>(oldest.age).count());
  if (oldest.age > look_back && !warned_long_) {
    spdlog::warn("merchant database: a transaction has been open for {:.1f} s, longer than merchant.look_back ({:.1f} "
                 "s): a row it commits with an older updated_at is missed by the read by updated_at (raise look_back, "
                 "or add change_xid: schema/merchant/postgresql/change_order/)",
                 std::chrono::duration<double>(oldest.age).count(), std::chrono::duration<double>(look_back).count());
  }
  warned_long_ = oldest.age > look_back;
}

void MerchantDatabaseMetrics::forget_age() {
  if (oldest_age_.Has({})) oldest_age_.Remove(&oldest_age_.Add({}));
}

void MerchantDatabaseMetrics::forget_oldest_transaction() {
  forget_age();
  if (oldest_visible_.Has({})) oldest_visible_.Remove(&oldest_visible_.Add({}));
  if (look_back_.Has({})) look_back_.Remove(&look_back_.Add({}));
  warned_long_ = false;
}

}  // namespace fulfillsync::daemon
