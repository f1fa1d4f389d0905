#pragma once
#include <span>

#include "fulfillsync/common/sqlite_migrations.hpp"

namespace fulfillsync::schema {

// schema/checkpoint/*.sql: the daemon's own checkpoint store.
std::span<const sqlite::Migration> checkpoint_migrations();

}  // namespace fulfillsync::schema
