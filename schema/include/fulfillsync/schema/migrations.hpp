#pragma once
#include <span>
#include <string_view>

#include "fulfillsync/common/sqlite_migrations.hpp"

namespace fulfillsync::schema {

// schema/checkpoint/*.sql: the daemon's own checkpoint store.
std::span<const sqlite::Migration> checkpoint_migrations();

// schema/merchant/results/*.sql: the result tables in the merchant database. Their SQL names tables
// `"{prefix}..."`; the merchant connector substitutes the validated result_table_prefix.
std::span<const sqlite::Migration> merchant_result_migrations();

// schema/merchant/change_log/*.sql: the change log on the source tables (`fulfillsyncd
// upgrade-source`). Each step is idempotent; no version table is kept in the shop's namespace.
std::span<const sqlite::Migration> merchant_change_log_migrations();

// schema/merchant/postgresql/change_order/*.sql: the transaction id order on PostgreSQL source tables
// (`fulfillsyncd upgrade-source`), run in the source schema. Idempotent, as the change log.
std::span<const sqlite::Migration> merchant_postgresql_change_order_migrations();

// schema/merchant/postgresql/results/*.sql: the result tables in PostgreSQL, the same versions as
// merchant_result_migrations() with PostgreSQL's types, applied in the result schema.
std::span<const sqlite::Migration> merchant_postgresql_result_migrations();

// The catalog's change triggers (`fulfillsyncd upgrade-source`, where the catalog's tables exist),
// each one idempotent script: schema/merchant/catalog_change_log.sql on SQLite (after the change
// log) and schema/merchant/postgresql/catalog_change_order.sql in PostgreSQL's source schema (after
// the change order, whose functions it uses).
std::string_view merchant_catalog_change_log_sql();
std::string_view merchant_postgresql_catalog_change_order_sql();

}  // namespace fulfillsync::schema
