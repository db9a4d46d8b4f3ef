// JSON text that is always valid: every string jetagent writes into JSON passes through here.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace jetagent {

// `value` as JSON text (`indent` < 0: one line). Strings that are not valid UTF-8 (a Latin-1 path,
// a UTF-16 labels file, binary bytes) have each invalid byte replaced by U+FFFD instead of making
// the whole document fail; non-finite numbers are written as null, as nlohmann::json always does.
inline std::string jsonText(const nlohmann::json& value, int indent = -1)
{
    return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace jetagent
