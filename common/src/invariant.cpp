#include "fulfillsync/common/invariant.hpp"

#include <cstdio>
#include <cstdlib>

namespace fulfillsync {

void invariant_failed(std::string_view condition, std::string_view message, const char* file, int line) {
  // stderr, not the logger: this must reach the journal even before logging is set up.
  std::fprintf(stderr, "%s:%d: invariant broken: %.*s (%.*s)\n", file, line, static_cast<int>(message.size()),
               message.data(), static_cast<int>(condition.size()), condition.data());
  std::fflush(stderr);
  std::abort();
}

}  // namespace fulfillsync
