#include "transports/ib/hca_filter.h"

#include <stdexcept>

#include "core/error.h"

namespace chorus {

HcaFilter::HcaFilter(const std::string& spec) : list_(NameList::parse(spec)) {
  for (const std::string& item : list_.items) {
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
    if (list_.names(e.name, device) && (e.port < 0 || e.port == port)) listed = true;
  }
  return listed != list_.exclude;
}

}  // namespace chorus
