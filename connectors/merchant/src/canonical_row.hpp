#pragma once
// The canonical serialization that a row's content hash (source_rows.hpp) is taken of, written once
// for both places that build it: content_hash() over a row read with its lines (source_rows.cpp),
// and the SQL functions that compute the same hash inside the database for the reconciliation sweep
// (sqlite_content_hash.cpp). The ledger keeps the hash of what it sent, so both must give the same
// bytes for the same stored values.
//
// Form: `reference_id=t<len>:<text>;`, each column `name=<typed value>;` in the contract's order
// (source_rows.cpp; an optional column only when not NULL), then each line as `|line;` followed by
// its columns, lines ordered by line_number.
#include <string>
#include <string_view>
#include <vector>

#include "fulfillsync/merchant/source_rows.hpp"

namespace fulfillsync::merchant::canonical {

// Appends one column: its name and its value with the value's type and length, so that no two
// different rows serialize alike.
void append(std::string& out, std::string_view name, const Field& value);

// Appends a column of the contract: an optional one (Column::optional) only when it holds a value.
template <typename Row>
void append_column(std::string& out, const Column<Row>& column, const Field& value) {
  if (column.optional && value.is_null()) return;
  append(out, column.name, value);
}

// One line serialized (`|line;` and its columns), with its line_number for ordering.
struct Line {
  Field line_number{};
  std::string text = "|line;";
};

// The lines in canonical order, concatenated: by line_number as SQLite's ORDER BY orders it (NULL,
// then numbers by value, then text, then blobs, bytewise), lines with equal numbers by their text,
// so the result does not depend on the order the lines were read in.
std::string join_lines(std::vector<Line> lines);

// SHA-256 of `canonical`, lowercase hex.
std::string hex_sha256(std::string_view canonical);

}  // namespace fulfillsync::merchant::canonical
