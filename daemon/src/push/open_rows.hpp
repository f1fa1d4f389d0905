#pragma once
// The open source rows compared with the outbound ledger: which have a version the ledger lacks.
// The one comparison behind the reconciliation sweep (SourceIntake) and `status`'s count of source
// rows waiting, so that the two never disagree. It pages SourceTables::open_row_versions, whose
// content hashes the database computes, and reads no row with its lines.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/daemon/store/outbound_ledger.hpp"
#include "fulfillsync/merchant/source_rows.hpp"
#include "fulfillsync/merchant/source_tables.hpp"

namespace fulfillsync::daemon {

// One version of a source row, as it is compared with the ledger.
struct RowVersion {
  std::string_view reference_id;
  std::string_view change_time;
  std::string_view content_hash;
  bool asks_cancel = false;
};
RowVersion version_of(const merchant::OpenRowVersion& row);
RowVersion version_of(const merchant::OrderRow& row);
RowVersion version_of(const merchant::ReturnRow& row);

// What the ledger holds of some rows of one table.
class LedgerVersions {
 public:
  // `starting_point`: rows changed before it are history, never sent (SourceIntake::Options).
  LedgerVersions(OutboundLedger& ledger, merchant::SourceKind kind, std::span<const std::string> keys,
                 std::string_view starting_point);

  // Whether this version is one to send that the ledger lacks: changed at or after the starting
  // point, and the ledger's create holds another version (or none), and, when the row asks for a
  // cancel, no cancel is queued either.
  bool lacks(const RowVersion& row) const;

 private:
  std::map<std::string, std::string, std::less<>> creates_, cancels_;
  std::string floor_;  // the starting point as an instant in change_time's form
};

// One page of open rows compared with the ledger.
struct OpenRowsPage {
  std::vector<merchant::OpenRowVersion> lacking;  // the rows whose version the ledger lacks, by key
  std::size_t compared = 0;                       // open rows in the page
  std::string last_key;                           // where the next page begins ("" when none was read)
  bool more = false;                              // more open rows may follow
};
OpenRowsPage compare_open_rows(merchant::SourceTables& source, OutboundLedger& ledger, merchant::SourceKind kind,
                               std::string_view starting_point, std::string_view after_key, std::size_t limit);

// Every open row of the table, a page at a time: how many have a version the ledger lacks.
std::int64_t count_open_rows_ledger_lacks(merchant::SourceTables& source, OutboundLedger& ledger,
                                          merchant::SourceKind kind, std::string_view starting_point,
                                          std::size_t page = 500);

}  // namespace fulfillsync::daemon
