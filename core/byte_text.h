// Sizes as people read them in messages and reports.
#pragma once

#include <cstdint>
#include <string>

namespace chorus {

// "12.5 GiB", "32 KiB", "512 B": whole numbers of the largest unit that fits, else one decimal.
std::string formatBytes(uint64_t bytes);

}  // namespace chorus
