# The sandbox's sources, listed once for its library (g++) and for the fuzz build (clang, fuzz/).
# The fuzz build leaves out the transport (server.cpp, Beast) and the command line (options.cpp).
set(FULFILLSYNC_SANDBOX_HANDLER_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/src/admin.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/auth.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/call.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/catalog.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/channels_orders.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/clock.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/error_bodies.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/estimate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/faults.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/http_types.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/inventory.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/journal.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/oauth.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/query.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/rate_limiter.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/receiving.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/render.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/returns.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/routes.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/sandbox.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/seed.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/simulate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/simulation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/stats.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/store.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/validation.cpp
)
set(FULFILLSYNC_SANDBOX_TRANSPORT_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/src/options.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/server.cpp
)

# The API description is compiled in (GET /openapi.yaml), so an installed sandbox needs no data
# files. Writes the generated source into the current binary directory and names it in OUT_VAR.
set(FULFILLSYNC_SANDBOX_DIR ${CMAKE_CURRENT_LIST_DIR})
function(fulfillsync_sandbox_openapi_source OUT_VAR)
  set(description ${FULFILLSYNC_SANDBOX_DIR}/openapi/fulfillment-api.yaml)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${description})
  file(READ ${description} hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," FULFILLSYNC_OPENAPI_BYTES "${hex}")
  configure_file(${FULFILLSYNC_SANDBOX_DIR}/src/openapi_text.cpp.in ${CMAKE_CURRENT_BINARY_DIR}/openapi_text.cpp @ONLY)
  set(${OUT_VAR} ${CMAKE_CURRENT_BINARY_DIR}/openapi_text.cpp PARENT_SCOPE)
endfunction()
