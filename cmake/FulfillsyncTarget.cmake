# Compiler settings shared by every target of the project. They hold with GCC 12 and clang 16 in every
# build type. GCC 12 at -O3 (Release) reports a may-overlap memcpy (-Wrestrict) in std::string's
# operator+ when a literal goes before a temporary string, which cannot happen (GCC bug 105651): such
# strings are built with fmt::format instead, and CI's Release build finds a new one.
add_library(fulfillsync_options INTERFACE)
target_compile_options(fulfillsync_options INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  $<$<BOOL:${FULFILLSYNC_WERROR}>:-Werror>
  # GCC 12 misreads Asio's coroutine frame allocator (operator new/delete with a size) as a mismatch.
  $<$<CXX_COMPILER_ID:GNU>:-Wno-mismatched-new-delete>)
# Asio and Beast are compiled once, in common/src/asio_impl.cpp, instead of in every translation unit.
target_compile_definitions(fulfillsync_options INTERFACE
  BOOST_ASIO_SEPARATE_COMPILATION BOOST_BEAST_SEPARATE_COMPILATION BOOST_ASIO_NO_DEPRECATED
  # Boost 1.74's Asio enables co_await on clang only for the coroutines TS (<experimental/coroutine>);
  # clang 16 has C++20's, which Asio then uses through libstdc++'s <coroutine> as it does with GCC.
  $<$<CXX_COMPILER_ID:Clang>:BOOST_ASIO_HAS_CO_AWAIT>)
if(FULFILLSYNC_SANITIZE STREQUAL "address")
  # The instrumentation defeats GCC 12's flow analysis: maybe-uninitialized then fires on Beast's
  # parser and on libstdc++'s std::function inside std::regex, none of them real.
  target_compile_options(fulfillsync_options INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
    $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)
  target_link_options(fulfillsync_options INTERFACE -fsanitize=address,undefined)
elseif(FULFILLSYNC_SANITIZE STREQUAL "thread")
  # GCC 12 warns that TSan does not model std::atomic_thread_fence, which Asio's fenced blocks use; the
  # hand-offs those fences guard also go through the scheduler's mutex, which TSan does model.
  target_compile_options(fulfillsync_options INTERFACE -fsanitize=thread -fno-omit-frame-pointer
    $<$<CXX_COMPILER_ID:GNU>:-Wno-tsan>)
  target_link_options(fulfillsync_options INTERFACE -fsanitize=thread)
endif()

# Precompiled headers: the standard and third-party headers that most sources of a larger target include,
# parsed once for the target instead of once for each of its sources. Parsing them is most of the front
# end's time (a source of the API models: 6.3 s to parse alone, 2.1 s with them precompiled), which is
# most of clang's at -O0 (build-clang/ of ./dev test) and less of GCC's under a sanitizer, whose
# instrumentation doubles the back end's (the daemon library, cold: 310 s without, 270 s with).
# Only third-party headers: they do not change as the project does. A target precompiles them with its
# own flags, so a header sees the same definitions it would in each source.
# Off by default: with GCC 12 and them precompiled, the AddressSanitizer tree's fulfillsyncd reported
# simdjson's on-demand parser buffers as leaked (api_error.cpp's read_error_body, a local parser), which
# it does not without them; not yet understood. ./dev test turns it on for the clang tree, which is
# compiled to check its warnings and never run.
option(FULFILLSYNC_PRECOMPILE_HEADERS "Precompile the common headers of each larger target" OFF)
set(FULFILLSYNC_PCH_STANDARD <algorithm> <chrono> <filesystem> <functional> <map> <memory> <optional> <string>
  <string_view> <utility> <vector> <fmt/format.h>)
set(FULFILLSYNC_PCH_ASIO <boost/asio/awaitable.hpp> <boost/asio/co_spawn.hpp> <boost/asio/io_context.hpp>
  <boost/asio/steady_timer.hpp> <boost/asio/use_awaitable.hpp>)
set(FULFILLSYNC_PCH_SQLITE <SQLiteCpp/Database.h> <SQLiteCpp/Statement.h>)

# fulfillsync_precompile_headers(<target> <header>...): the standard set and the headers named.
function(fulfillsync_precompile_headers target)
  if(FULFILLSYNC_PRECOMPILE_HEADERS)
    target_precompile_headers(${target} PRIVATE ${FULFILLSYNC_PCH_STANDARD} ${ARGN})
  endif()
endfunction()

# fulfillsync_library(NAME <name> SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...] [PRECOMPILE <header>...]):
# a component library with its public include/ folder, exported as fulfillsync::<name>. PRECOMPILE (even
# empty) precompiles the standard set and the headers named.
function(fulfillsync_library)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS;PRECOMPILE" ${ARGN})
  add_library(fulfillsync_${ARG_NAME} STATIC ${ARG_SOURCES})
  add_library(fulfillsync::${ARG_NAME} ALIAS fulfillsync_${ARG_NAME})
  target_include_directories(fulfillsync_${ARG_NAME} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(fulfillsync_${ARG_NAME}
    PUBLIC fulfillsync_options ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  if("PRECOMPILE" IN_LIST ARGN)
    fulfillsync_precompile_headers(fulfillsync_${ARG_NAME} ${ARG_PRECOMPILE})
  endif()
endfunction()
