#include "result_migrations.hpp"

namespace fulfillsync::merchant {

ResultMigrations::ResultMigrations(std::string_view prefix, std::span<const sqlite::Migration> embedded)
    : prefix_(prefix) {
  for (const auto& step : embedded) {
    std::string text(step.sql);
    for (std::size_t at = text.find("{prefix}"); at != std::string::npos; at = text.find("{prefix}", at)) {
      text.replace(at, 8, prefix_);
      at += prefix_.size();
    }
    sql_.push_back(std::move(text));
  }
  for (std::size_t i = 0; i < embedded.size(); ++i) steps_.push_back({embedded[i].version, embedded[i].name, sql_[i]});
}

}  // namespace fulfillsync::merchant
