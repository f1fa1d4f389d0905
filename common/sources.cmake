# common/'s sources, listed once for the library (g++) and for the fuzz build (clang, fuzz/). Asio's
# separately compiled implementation (src/asio_impl.cpp) is the library's alone: nothing fuzzed runs Asio.
set(FULFILLSYNC_COMMON_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/src/crypto.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/invariant.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/json_writer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/logging.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/printable.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/sqlite_migrations.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/sqlite_read_only.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/time_zone.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/timestamps.cpp
)
