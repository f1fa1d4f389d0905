#pragma once
// SQL identifiers as both merchant databases (SQLite, PostgreSQL) write them: double quotes, a quote
// inside doubled.
#include <string>
#include <string_view>

namespace fulfillsync::merchant {

// Identifiers here are the contract's names or validated configuration (prefix, schemas); quoting
// them anyway keeps a name that happens to be a keyword working.
std::string sql_name(std::string_view identifier);

// A lower-case letter or underscore, then lower-case letters, digits and underscores.
bool is_plain_identifier(std::string_view name);

}  // namespace fulfillsync::merchant
