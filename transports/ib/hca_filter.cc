#include "transports/ib/hca_filter.h"

#include <sstream>

#include "core/error.h"

namespace chorus {

HcaFilter::HcaFilter(const std::string& spec) {
  std::string s = spec;
  if (!s.empty() && s[0] == '^') {
    exclude_ = true;
    s.erase(0, 1);
  }
  if (!s.empty() && s[0] == '=') {
    exact_ = true;
    s.erase(0, 1);
  }
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    Entry e{item, -1};
    size_t colon = item.find(':');
    if (colon != std::string::npos) {
      e.name = item.substr(0, colon);
      const std::string port = item.substr(colon + 1);
      try {
        size_t used = 0;
        e.port = std::stoi(port, &used);
        if (used != port.size() || e.port < 1 || e.port > 255) throw std::invalid_argument(port);
      } catch (const std::exception&) {
        throwInvalidArgument("CHORUS_IB_HCA '" + spec + "': '" + item + "' has no valid port after ':'");
      }
    }
    entries_.push_back(e);
  }
}

bool HcaFilter::allows(const std::string& device, int port) const {
  if (entries_.empty()) return true;
  bool listed = false;
  for (const Entry& e : entries_) {
    const bool nameMatches = exact_ ? device == e.name : device.compare(0, e.name.size(), e.name) == 0;
    if (nameMatches && (e.port < 0 || e.port == port)) listed = true;
  }
  return listed != exclude_;
}

}  // namespace chorus
