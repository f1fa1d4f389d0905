#pragma once

// Whether this test program is built with a sanitizer (GCC defines these under -fsanitize), and how
// much slower its code runs there: tests/CMakeLists.txt scales CTest's time limits alike. Volume
// tests run smaller under a sanitizer; the plain build has the full run.

namespace fulfillsync::testing {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
inline constexpr int kSanitizedSlowdown = 5;
#elif defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
inline constexpr int kSanitizedSlowdown = 3;
#else
inline constexpr bool kSanitized = false;
inline constexpr int kSanitizedSlowdown = 1;
#endif

}  // namespace fulfillsync::testing
