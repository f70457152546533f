#pragma once
// The chat history's schema, as the ordered list of its migration steps.

#include "app/store/migrations.h"

#include <span>

namespace ember::store {

std::span<const Migration> chatMigrations();

}  // namespace ember::store
