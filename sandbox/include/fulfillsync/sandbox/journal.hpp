#pragma once
// --state FILE: every request that changes state is appended to a SQLite journal, with the
// simulated time and the caller it was made as; at start-up the journal is replayed through the
// same handlers with the clock pinned to each entry's time, which rebuilds the same state (ids
// and token values included: those derive from the secret kept in the file).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fulfillsync/sandbox/auth.hpp"
#include "fulfillsync/sandbox/http_types.hpp"

namespace SQLite {
class Database;
}

namespace fulfillsync::sandbox {

struct JournalEntry {
  TimePoint at{};
  Principal principal;  // merchant 0: no caller (OAuth endpoints, admin)
  HttpRequest request;
};

class Journal {
 public:
  // Opens (creating or migrating) the file. Throws on failure.
  explicit Journal(const std::string& path);
  ~Journal();

  // The token secret of this state, created on first use.
  std::string secret();
  void append(const JournalEntry& entry);
  void for_each(const std::function<void(const JournalEntry&)>& visit);
  void clear();

  // The simulated time reserved for answers (Sandbox::shown_now): no answer showed a later one.
  std::optional<TimePoint> shown_until();
  void set_shown_until(TimePoint until);

 private:
  std::unique_ptr<SQLite::Database> db_;
};

}  // namespace fulfillsync::sandbox
