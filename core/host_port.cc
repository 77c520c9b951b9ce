#include "core/host_port.h"

#include <cstdlib>

#include "core/error.h"

namespace chorus {

void splitHostPort(const std::string& s, const std::string& what, std::string* host, uint16_t* port) {
  size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) {
    throwInvalidArgument(what + " '" + s + "' is not host:port");
  }
  std::string h = s.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  char* end = nullptr;
  long p = std::strtol(s.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || p < 0 || p > 65535) throwInvalidArgument(what + " '" + s + "' has a bad port");
  *host = h;
  *port = static_cast<uint16_t>(p);
}

}  // namespace chorus
