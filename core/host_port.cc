#include "core/host_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>

#include "core/error.h"

namespace chorus {

void splitHostPort(const std::string& s, const std::string& what, std::string* host, uint16_t* port) {
  size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) {
    throwInvalidArgument(what + " '" + s + "' is not host:port (an IPv6 host in brackets: [fd00::1]:29500)");
  }
  std::string h = s.substr(0, colon);
  if (h.front() == '[') {
    if (h.size() < 3 || h.back() != ']' || h.find(']') != h.size() - 1) {
      throwInvalidArgument(what + " '" + s + "' is not [IPv6 address]:port");
    }
    h = h.substr(1, h.size() - 2);
  } else if (h.find_first_of(":[]") != std::string::npos) {
    throwInvalidArgument(what + " '" + s + "': write an IPv6 host in brackets, [" + h + "]:port");
  }
  char* end = nullptr;
  long p = std::strtol(s.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || p < 0 || p > 65535) throwInvalidArgument(what + " '" + s + "' has a bad port");
  *host = h;
  *port = static_cast<uint16_t>(p);
}

std::string joinHostPort(const std::string& host, uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string bareHost(const std::string& host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') return host.substr(1, host.size() - 2);
  return host;
}

int parseSocketFamily(const std::string& text, const std::string& what) {
  if (text.empty()) return AF_UNSPEC;
  if (text == "AF_INET") return AF_INET;
  if (text == "AF_INET6") return AF_INET6;
  throwInvalidArgument(what + " '" + text + "' is not AF_INET, AF_INET6 or empty (either)");
}

std::string withLocalZone(const std::string& host, const std::string& ifname) {
  const std::string bare = host.substr(0, host.find('%'));
  in6_addr a{};
  if (inet_pton(AF_INET6, bare.c_str(), &a) != 1 || !IN6_IS_ADDR_LINKLOCAL(&a)) return host;
  return bare + "%" + ifname;
}

}  // namespace chorus
