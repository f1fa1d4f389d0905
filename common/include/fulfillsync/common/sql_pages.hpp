#pragma once
#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "fulfillsync/common/invariant.hpp"

namespace fulfillsync::sql {

// "(?first, ...), (...)": `rows` rows of `columns` numbered parameters each, for a page of rows in one
// statement.
inline std::string parameter_rows(std::size_t rows, std::size_t columns, std::size_t first) {
  std::string text;
  for (std::size_t row = 0; row < rows; ++row) {
    text += row == 0 ? "(" : ", (";
    for (std::size_t column = 0; column < columns; ++column) {
      text += fmt::format("{}?{}", column == 0 ? "" : ", ", first + row * columns + column);
    }
    text += ")";
  }
  return text;
}

// The texts of one statement over a page of up to `full_page` rows, written once for each of a few page
// sizes: the powers of two below the full page, and the full page. A page takes the smallest that holds
// it and leaves the parameters of the rows it lacks NULL, which matches nothing. A statement written for
// the full page alone makes a page of one do the work of a hundred (each absent row is still looked
// up); this way a short page costs at most twice its own rows, and a statement is prepared once per size.
class PagedStatement {
 public:
  // `text(rows)`: the statement for a page of `rows` rows.
  PagedStatement(std::size_t full_page, const std::function<std::string(std::size_t rows)>& text) {
    FULFILLSYNC_INVARIANT(full_page > 0, "a page holds at least one row");
    for (std::size_t rows = 1; rows < full_page; rows *= 2) texts_.emplace_back(rows, text(rows));
    texts_.emplace_back(full_page, text(full_page));
  }

  std::size_t full_page() const { return texts_.back().first; }

  // The text for a page of `rows` rows (1 to the full page), and the rows it is written for.
  const std::string& for_rows(std::size_t rows) const { return written_for(rows).second; }
  std::size_t size_for(std::size_t rows) const { return written_for(rows).first; }

  // Calls `write(page, text)` for each full page of `items` and the rest, `text` written for its size.
  template <typename T, typename Write>
  void for_each_page(std::span<const T> items, const Write& write) const {
    for (std::size_t first = 0; first < items.size(); first += full_page()) {
      const auto page = items.subspan(first, std::min(full_page(), items.size() - first));
      write(page, for_rows(page.size()));
    }
  }

 private:
  const std::pair<std::size_t, std::string>& written_for(std::size_t rows) const {
    FULFILLSYNC_INVARIANT(rows > 0 && rows <= full_page(), "a page of statement rows is 1 to the full page");
    for (const auto& written : texts_) {
      if (rows <= written.first) return written;
    }
    return texts_.back();
  }

  std::vector<std::pair<std::size_t, std::string>> texts_;
};

}  // namespace fulfillsync::sql
