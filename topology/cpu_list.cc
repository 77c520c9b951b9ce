#include "topology/cpu_list.h"

#include <algorithm>

namespace chorus {

namespace {

// Reads a decimal CPU number at text[*pos]; false when there is none or it exceeds kMaxCpuIndex.
bool readCpu(std::string_view text, size_t* pos, int* cpu, std::string* why) {
  size_t start = *pos;
  long value = 0;
  while (*pos < text.size() && text[*pos] >= '0' && text[*pos] <= '9') {
    value = value * 10 + (text[*pos] - '0');
    if (value > kMaxCpuIndex) {
      *why = "CPU number above " + std::to_string(kMaxCpuIndex);
      return false;
    }
    ++*pos;
  }
  if (*pos == start) {
    *why = start < text.size()
               ? "unexpected character '" + std::string(1, text[start]) + "' at offset " + std::to_string(start)
               : "a number is missing at the end";
    return false;
  }
  *cpu = static_cast<int>(value);
  return true;
}

}  // namespace

bool parseCpuList(std::string_view text, std::vector<int>* cpus, std::string* why) {
  cpus->clear();
  if (text.empty()) return true;
  std::vector<bool> seen;
  size_t pos = 0;
  for (;;) {
    int first = 0;
    if (!readCpu(text, &pos, &first, why)) return false;
    int last = first;
    if (pos < text.size() && text[pos] == '-') {
      ++pos;
      if (!readCpu(text, &pos, &last, why)) return false;
      if (last < first) {
        *why = "range " + std::to_string(first) + "-" + std::to_string(last) + " is reversed";
        return false;
      }
    }
    if (seen.size() <= static_cast<size_t>(last)) seen.resize(static_cast<size_t>(last) + 1, false);
    for (int c = first; c <= last; ++c) {
      if (seen[static_cast<size_t>(c)]) {
        *why = "CPU " + std::to_string(c) + " is listed twice";
        return false;
      }
      seen[static_cast<size_t>(c)] = true;
      cpus->push_back(c);
    }
    if (pos == text.size()) break;
    if (text[pos] != ',') {
      *why = "unexpected character '" + std::string(1, text[pos]) + "' at offset " + std::to_string(pos);
      return false;
    }
    ++pos;
  }
  std::sort(cpus->begin(), cpus->end());
  return true;
}

std::string formatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace chorus
