#pragma once
// What every face of the merchant database (merchant_database.hpp) promises about failures.
//
// Every call is one short transaction that returns plain values, so no read is ever held across a
// network call. Failures of the database itself (locked past the busy timeout, a missing table or
// column, a write through a read-only open) throw MerchantDatabaseError; bad data in a row never
// does: it is handed back as stored and reported by the mapping (daemon/src/mapping).
#include <stdexcept>

namespace fulfillsync::merchant {

class MerchantDatabaseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fulfillsync::merchant
