// Enum names written once: one table of {value, name} rows per enum, read in both directions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace jetagent {

// One row of an enum's name table, for example
//     inline constexpr EnumName<Pacing> kPacingNames[] = {{Pacing::Realtime, "realtime"}, ...};
// The table's order is the order messages list the names in.
template <typename E>
struct EnumName {
    E value;
    const char* name;
};

// The name of `value`, or `unknown` when the table has no row for it.
template <typename E, size_t N>
constexpr const char* nameOf(const EnumName<E> (&table)[N], E value, const char* unknown = "?")
{
    for (const EnumName<E>& row : table)
        if (row.value == value)
            return row.name;
    return unknown;
}

// The value named `text` (exactly, case included) into `out`; false, `out` untouched, when no row
// has that name.
template <typename E, size_t N>
bool parseName(const EnumName<E> (&table)[N], std::string_view text, E& out)
{
    for (const EnumName<E>& row : table)
        if (text == row.name) {
            out = row.value;
            return true;
        }
    return false;
}

// Every name in table order, joined by `separator` ("realtime, none"), for messages.
template <typename E, size_t N>
std::string joinNames(const EnumName<E> (&table)[N], const char* separator = ", ")
{
    std::string names;
    for (const EnumName<E>& row : table)
        names += (names.empty() ? "" : separator) + std::string(row.name);
    return names;
}

} // namespace jetagent
