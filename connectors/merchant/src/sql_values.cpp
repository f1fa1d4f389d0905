#include "sql_values.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

#include <fmt/format.h>

#include "fulfillsync/common/invariant.hpp"
#include "sql_names.hpp"

namespace fulfillsync::merchant {
namespace {

bool contains(const std::vector<std::string_view>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::optional<std::string> SqlValue::text() const {
  if (const auto* integer = std::get_if<std::int64_t>(&value_)) return std::to_string(*integer);
  if (const auto* text = std::get_if<std::string>(&value_)) return *text;
  return std::nullopt;
}

std::string upsert_sql(std::string_view table, SqlValues row, const std::optional<OnConflict>& on_conflict,
                       const std::function<std::string(std::size_t index, std::string_view name)>& parameter,
                       std::size_t rows, bool returning_key) {
  std::string names, values;
  for (const Named& named : row) names += fmt::format("{}{}", names.empty() ? "" : ", ", sql_name(named.name));
  for (std::size_t r = 0; r < rows; ++r) {
    values += r == 0 ? "(" : ", (";
    for (std::size_t i = 0; i < row.size(); ++i) {
      values += fmt::format("{}{}", i == 0 ? "" : ", ", parameter(r * row.size() + i, row[i].name));
    }
    values += ")";
  }
  std::string sql = fmt::format("INSERT INTO {} AS t ({}) VALUES {}", table, names, values);
  if (!on_conflict) return sql;

  std::string keys, updates;
  for (std::string_view key : on_conflict->key) keys += fmt::format("{}{}", keys.empty() ? "" : ", ", sql_name(key));
  for (const Named& named : row) {
    const bool written_out = std::any_of(on_conflict->set.begin(), on_conflict->set.end(),
                                         [&](const auto& assignment) { return assignment.first == named.name; });
    if (contains(on_conflict->key, named.name) || contains(on_conflict->insert_only, named.name) || written_out) {
      continue;
    }
    updates += fmt::format("{0}{1} = excluded.{1}", updates.empty() ? "" : ", ", sql_name(named.name));
  }
  for (const auto& [column, expression] : on_conflict->set) {
    updates += fmt::format("{}{} = {}", updates.empty() ? "" : ", ", sql_name(column), expression);
  }
  sql += fmt::format(" ON CONFLICT ({}) DO UPDATE SET {}", keys, updates);
  if (!on_conflict->where.empty()) sql += fmt::format(" WHERE {}", on_conflict->where);
  if (returning_key) sql += fmt::format(" RETURNING {}", keys);
  return sql;
}

std::string key_text(SqlValues row, std::span<const std::string_view> key) {
  std::string text;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const auto found = std::find_if(row.begin(), row.end(), [&](const Named& named) { return named.name == key[i]; });
    FULFILLSYNC_INVARIANT(found != row.end(), "a row names the columns of its key");
    if (i > 0) text += kKeySeparator;
    text += found->value.text().value_or("");
  }
  return text;
}

std::vector<std::span<const std::vector<Named>>> statements_of_rows(std::span<const std::vector<Named>> rows,
                                                                    std::span<const std::string_view> key) {
  std::vector<std::span<const std::vector<Named>>> statements;
  const auto cut = [&](std::size_t first, std::size_t end) {
    while (first < end) {
      const std::size_t* size = std::find_if(std::begin(kRowsPerStatement), std::end(kRowsPerStatement),
                                             [&](std::size_t rows_per_statement) { return rows_per_statement <= end - first; });
      statements.push_back(rows.subspan(first, *size));
      first += *size;
    }
  };
  std::unordered_set<std::string> keys;  // of the run so far
  std::size_t run = 0;
  for (std::size_t i = 0; i < rows.size() && !key.empty(); ++i) {
    std::string row_key = key_text(rows[i], key);
    if (keys.contains(row_key)) {
      cut(run, i);
      run = i;
      keys.clear();
    }
    keys.insert(std::move(row_key));
  }
  cut(run, rows.size());
  return statements;
}

RowUpsert::RowUpsert(std::string table, std::optional<OnConflict> on_conflict)
    : table_(std::move(table)), on_conflict_(std::move(on_conflict)) {}

void RowUpsert::check_columns(SqlValues row) {
  if (columns_.empty()) {
    for (const Named& named : row) columns_.push_back(named.name);
  }
  FULFILLSYNC_INVARIANT(std::equal(row.begin(), row.end(), columns_.begin(), columns_.end(),
                                   [](const Named& named, std::string_view column) { return named.name == column; }),
                        "every row of an upsert names the columns of its first row, in that order");
}

std::string RowUpsert::conflict_key(SqlValues row) const {
  if (!on_conflict_) return {};
  return merchant::key_text(row, on_conflict_->key);
}

std::vector<RowUpsert::Batch> RowUpsert::batches(std::span<const std::vector<Named>> rows, bool returning) {
  for (const std::vector<Named>& row : rows) check_columns(row);
  std::vector<Batch> made;
  // Plain inserts: a key named twice fails either way.
  const std::span<const std::string_view> key = on_conflict_ ? std::span<const std::string_view>(on_conflict_->key)
                                                             : std::span<const std::string_view>();
  for (const std::span<const std::vector<Named>> statement : statements_of_rows(rows, key)) {
    std::string& sql = batch_sql_[{statement.size(), returning}];
    if (sql.empty()) {
      sql = upsert_sql(table_, statement.front(), on_conflict_,
                       [this](std::size_t index, std::string_view) { return numbered_parameter(index); },
                       statement.size(), returning && on_conflict_);
    }
    made.push_back({&sql, statement});
  }
  return made;
}

std::vector<int> RowUpsert::write_each(std::span<const std::vector<Named>> rows) {
  const std::vector<Batch> made = batches(rows, true);
  const std::vector<std::vector<std::string>> written = run_batches(made, true);
  std::vector<int> changed;
  changed.reserve(rows.size());
  for (std::size_t b = 0; b < made.size(); ++b) {
    // A plain insert writes every row or fails.
    const std::unordered_set<std::string> keys(written[b].begin(), written[b].end());
    for (const std::vector<Named>& row : made[b].rows) changed.push_back(!on_conflict_ || keys.contains(conflict_key(row)) ? 1 : 0);
  }
  return changed;
}

void RowUpsert::write_all(std::span<const std::vector<Named>> rows) {
  if (rows.empty()) return;
  run_batches(batches(rows, false), false);
}

std::string numbered_parameters(std::string_view sql, SqlValues values) {
  const auto name_char = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; };
  std::string out;
  bool quoted = false;
  for (std::size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (c == '\'') quoted = !quoted;
    const bool parameter = !quoted && c == ':' && i + 1 < sql.size() && name_char(sql[i + 1]) &&
                           (i == 0 || sql[i - 1] != ':');
    if (!parameter) {
      out += c;
      continue;
    }
    std::size_t end = i + 1;
    while (end < sql.size() && name_char(sql[end])) ++end;
    const std::string_view name = sql.substr(i + 1, end - i - 1);
    const auto found = std::find_if(values.begin(), values.end(), [&](const Named& named) { return named.name == name; });
    if (found == values.end()) throw std::invalid_argument(fmt::format("no value for :{} in {}", name, sql));
    out += fmt::format("${}", found - values.begin() + 1);
    i = end - 1;
  }
  return out;
}

}  // namespace fulfillsync::merchant
