#include "sql_values.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

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
                       const std::function<std::string(std::size_t index, std::string_view name)>& parameter) {
  std::string names, values;
  for (std::size_t i = 0; i < row.size(); ++i) {
    names += fmt::format("{}{}", names.empty() ? "" : ", ", sql_name(row[i].name));
    values += fmt::format("{}{}", values.empty() ? "" : ", ", parameter(i, row[i].name));
  }
  std::string sql = fmt::format("INSERT INTO {} AS t ({}) VALUES ({})", table, names, values);
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
  return sql;
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
