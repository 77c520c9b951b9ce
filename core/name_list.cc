#include "core/name_list.h"

#include <sstream>

namespace chorus {

NameList NameList::parse(const std::string& spec) {
  NameList list;
  std::string s = spec;
  if (!s.empty() && s[0] == '^') {
    list.exclude = true;
    s.erase(0, 1);
  }
  if (!s.empty() && s[0] == '=') {
    list.exact = true;
    s.erase(0, 1);
  }
  list.blank = s.empty();
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) list.items.push_back(item);
  }
  return list;
}

}  // namespace chorus
