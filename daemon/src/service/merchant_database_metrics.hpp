#pragma once
// The merchant database's health as metrics and logs (PostgreSQL, where a connection can be lost and
// transactions run side by side): its failures and reopenings as the connection tells them, and,
// where the source is read by updated_at, how old the oldest open transaction is.
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "fulfillsync/config/config.hpp"
#include "fulfillsync/merchant/merchant_database.hpp"

namespace fulfillsync::daemon {

class MerchantDatabaseMetrics final : public merchant::DatabaseFailureObserver {
 public:
  // Every kind of fulfillsync_merchant_database_errors_total at 0, so that increase() sees the first.
  explicit MerchantDatabaseMetrics(prometheus::Registry& registry);

  void failed(merchant::DatabaseFailure failure) override;
  void reopened() override;

  // One look at the oldest open transaction (MerchantDatabase::oldest_open_transaction): its age, and
  // a warning when it comes to outlast `look_back`, since a row it commits may then be missed by a
  // read by updated_at. Where other roles' transactions are hidden, the age is left out, not 0.
  void note_oldest_transaction(const merchant::OldestTransaction& oldest, config::Duration look_back);
  // The source is read by transaction id (or the look failed): no age to export.
  void forget_oldest_transaction();

 private:
  void forget_age();

  prometheus::Family<prometheus::Counter>& errors_;
  prometheus::Counter& reopens_;
  prometheus::Family<prometheus::Gauge>& oldest_age_;
  prometheus::Family<prometheus::Gauge>& oldest_visible_;
  prometheus::Family<prometheus::Gauge>& look_back_;
  bool warned_long_ = false;       // the transaction outlasting look_back is logged once
  bool warned_invisible_ = false;  // so is a role that cannot see the others' transactions
};

}  // namespace fulfillsync::daemon
