// Name ordering that people expect from numbered names: "frame2.png" before "frame10.png",
// "hwmon9" before "hwmon10", "1-0040" before "1-0041".
#pragma once

#include <string>

namespace jetagent {

// Compares names so that embedded digit runs sort by value; equal values with more leading zeros
// come later. Otherwise byte order.
bool naturalLess(const std::string& a, const std::string& b);

} // namespace jetagent
