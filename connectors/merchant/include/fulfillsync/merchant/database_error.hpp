#pragma once
// What every face of the merchant database (merchant_database.hpp) promises about failures.
//
// Every call is one short transaction that returns plain values, so no read is ever held across a
// network call. Failures of the database itself (locked past the busy timeout, a missing table or
// column, a write through a read-only open, a lost connection) throw MerchantDatabaseError, which
// says what kind of failure it was; bad data in a row never does: it is handed back as stored and
// reported by the mapping (daemon/src/mapping).
#include <stdexcept>
#include <string>
#include <string_view>

namespace fulfillsync::merchant {

// What went wrong, as fulfillsync_merchant_database_errors_total{kind} counts it.
enum class DatabaseFailure {
  connection_lost,    // the server closed the connection or stopped answering (a restart, the network)
  unreachable,        // the connection could not be opened (again)
  statement_timeout,  // a statement ran longer than statement_timeout (a lock held by another session)
  read_only,          // a write refused: the server is a read-only replica, in recovery, or set read only
  permission_denied,  // a privilege the daemon's role lacks (revoked, or a table made after its GRANT)
  other,              // anything else: a missing table, a constraint
};

std::string_view to_string(DatabaseFailure failure);

class MerchantDatabaseError : public std::runtime_error {
 public:
  explicit MerchantDatabaseError(const std::string& what, DatabaseFailure failure = DatabaseFailure::other)
      : std::runtime_error(what), failure_(failure) {}
  DatabaseFailure failure() const { return failure_; }

 private:
  DatabaseFailure failure_;
};

// Told of the database's failures as they happen, those the connection retries by itself included
// (a read run again on a reopened connection never reaches the caller as an error).
class DatabaseFailureObserver {
 public:
  virtual ~DatabaseFailureObserver() = default;
  virtual void failed(DatabaseFailure failure) = 0;
  // The connection was opened again after it was lost or dropped.
  virtual void reopened() = 0;
};

}  // namespace fulfillsync::merchant
