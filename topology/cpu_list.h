// CPU sets written as Linux writes them ("0-7,16-23", as in /sys/devices/system/node/node0/cpulist).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chorus {

// The highest CPU number a CPU list may name (bounds what a hostile list can make us allocate).
inline constexpr int kMaxCpuIndex = 65535;

// Parses a list of CPU numbers and ranges into ascending, distinct CPU numbers ("" is the empty set). Returns
// false and says why in *why (without the text itself) for anything else: signs, spaces, reversed ranges,
// numbers above kMaxCpuIndex, a CPU named twice.
bool parseCpuList(std::string_view text, std::vector<int>* cpus, std::string* why);

// Writes ascending distinct CPU numbers in the shortest list form ("0-3,8,10-11"); "" for none.
std::string formatCpuList(const std::vector<int>& cpus);

}  // namespace chorus
