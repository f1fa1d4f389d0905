#pragma once
// FULFILLSYNC_INVARIANT(condition, message): a check that holds in every build type. assert()
// vanishes when NDEBUG is defined (CMake's Release and MinSizeRel, and so a packager's build); this
// does not. It is for invariants whose breach must stop the daemon, because carrying on could send
// an order twice or leave a wrong state in a store: it prints `message` (evaluated only on a breach)
// with the condition and where it failed, then aborts, and systemd restarts the daemon. A cheap
// check of how the code uses its own helpers stays a plain assert.
#include <string_view>

namespace fulfillsync {

[[noreturn]] void invariant_failed(std::string_view condition, std::string_view message, const char* file,
                                   int line);

}  // namespace fulfillsync

#define FULFILLSYNC_INVARIANT(condition, message)                                                \
  do {                                                                                           \
    if (!(condition)) ::fulfillsync::invariant_failed(#condition, (message), __FILE__, __LINE__); \
  } while (false)

// A place the code can never reach while its invariants hold (a value the schema forbids, say).
// Unconditional, so that every compiler and sanitizer sees that control does not go on.
#define FULFILLSYNC_UNREACHABLE(message) \
  ::fulfillsync::invariant_failed("unreachable", (message), __FILE__, __LINE__)
