# embed_migrations(<name> <dir> <output.cpp>): writes a C++ file defining
# `std::span<const fulfillsync::sqlite::Migration> fulfillsync::schema::<name>_migrations()` from the
# files <dir>/NNNN_<what>.sql, NNNN being the schema version.
function(embed_migrations NAME DIR OUTPUT)
  file(GLOB files CONFIGURE_DEPENDS "${DIR}/*.sql")
  list(SORT files)
  set(entries "")
  foreach(file IN LISTS files)
    get_filename_component(base "${file}" NAME_WE)
    if(NOT base MATCHES "^([0-9]+)_(.+)$")
      message(FATAL_ERROR "${file}: migration files are named NNNN_what.sql")
    endif()
    math(EXPR version "${CMAKE_MATCH_1}")
    set(what "${CMAKE_MATCH_2}")
    file(READ "${file}" sql)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${file}")
    string(APPEND entries "    {${version}, \"${what}\", R\"fulfillsync_sql(${sql})fulfillsync_sql\"},\n")
  endforeach()
  file(CONFIGURE OUTPUT "${OUTPUT}" CONTENT [=[
// Generated from @DIR@ by cmake/EmbedMigrations.cmake. Do not edit.
#include "fulfillsync/schema/migrations.hpp"

namespace fulfillsync::schema {
namespace {
constexpr sqlite::Migration kMigrations[] = {
@entries@};
}  // namespace

std::span<const sqlite::Migration> @NAME@_migrations() { return kMigrations; }
}  // namespace fulfillsync::schema
]=] @ONLY)
endfunction()

# embed_script(<name> <file.sql> <output.cpp>): writes a C++ file defining
# `std::string_view fulfillsync::schema::<name>_sql()`, the text of one idempotent SQL script.
function(embed_script NAME FILE OUTPUT)
  file(READ "${FILE}" sql)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${FILE}")
  file(CONFIGURE OUTPUT "${OUTPUT}" CONTENT [=[
// Generated from @FILE@ by cmake/EmbedMigrations.cmake. Do not edit.
#include "fulfillsync/schema/migrations.hpp"

namespace fulfillsync::schema {
std::string_view @NAME@_sql() { return R"fulfillsync_sql(@sql@)fulfillsync_sql"; }
}  // namespace fulfillsync::schema
]=] @ONLY)
endfunction()
