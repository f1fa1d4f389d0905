# The models' sources, listed once for the library (g++) and for the fuzz build (clang, fuzz/).
set(FULFILLSYNC_API_MODELS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/src/api_error.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/decode.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/decode_channel.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/decode_estimate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/decode_inventory.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/decode_order.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/decode_parts.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/decode_receiving.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/decode_return.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/decode_shipment.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/encode.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/json_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/scalars.cpp
)
