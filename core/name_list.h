// NCCL's name-list syntax, as NCCL_SOCKET_IFNAME and NCCL_IB_HCA write it: comma-separated names matched as
// prefixes; a leading ^ excludes the names listed; a leading = (after any ^) matches them exactly. One parser for
// CHORUS_SOCKET_IFNAME (topology/network_interfaces.h) and CHORUS_IB_HCA (transports/ib/hca_filter.h).
#pragma once

#include <string>
#include <vector>

namespace chorus {

struct NameList {
  std::vector<std::string> items;  // as written, empty ones dropped
  bool exclude = false, exact = false;
  bool blank = true;  // nothing after the ^ and =

  static NameList parse(const std::string& spec);
  // True when `name` is what `item` names: item is its prefix, or all of it when exact.
  bool names(const std::string& item, const std::string& name) const {
    return exact ? name == item : name.compare(0, item.size(), item) == 0;
  }
};

}  // namespace chorus
