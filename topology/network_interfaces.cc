#include "topology/network_interfaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>

#include "core/error.h"
#include "core/name_list.h"

namespace chorus {

std::vector<NetworkInterface> listNetworkInterfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) throwSystemError("listing network interfaces", "getifaddrs", errno);
  std::vector<NetworkInterface> out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || !(i->ifa_flags & IFF_UP)) continue;
    char buf[INET6_ADDRSTRLEN] = {0};
    int family = i->ifa_addr->sa_family;
    if (family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof(buf));
    } else if (family == AF_INET6) {
      auto* a6 = &reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr;
      if (IN6_IS_ADDR_LINKLOCAL(a6)) continue;  // needs a scope id; not worth the trouble
      inet_ntop(AF_INET6, a6, buf, sizeof(buf));
    } else {
      continue;
    }
    out.push_back({i->ifa_name, buf, (i->ifa_flags & IFF_LOOPBACK) != 0});
  }
  freeifaddrs(list);
  // IPv4 first: within one name keep kernel order, but prefer the v4 address of each interface.
  std::stable_sort(out.begin(), out.end(), [](const NetworkInterface& a, const NetworkInterface& b) {
    return a.address.find(':') == std::string::npos && b.address.find(':') != std::string::npos;
  });
  return out;
}

bool interfaceMatches(const std::string& spec, const std::string& name) {
  const NameList list = NameList::parse(spec);
  if (list.blank) return !list.exclude;
  bool hit = false;
  for (const std::string& item : list.items) hit |= list.names(item, name);
  return list.exclude ? !hit : hit;
}

NetworkInterface chooseNetworkInterface(const std::string& spec) {
  std::vector<NetworkInterface> all = listNetworkInterfaces();
  if (!spec.empty()) {
    for (const auto& i : all) {
      if (interfaceMatches(spec, i.name)) return i;
    }
  } else {
    for (const auto& i : all) {
      if (!i.loopback && !interfaceMatches("docker", i.name)) return i;
    }
    for (const auto& i : all) {
      if (i.loopback) return i;
    }
  }
  std::string names;
  for (const auto& i : all) names += (names.empty() ? "" : ", ") + i.name + " " + i.address;
  throwInvalidArgument("no network interface matches CHORUS_SOCKET_IFNAME='" + spec + "' (this host has: " +
                       (names.empty() ? "none" : names) + ")");
}

}  // namespace chorus
