#include "topology/network_interfaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

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
    std::string address;
    if (family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof(buf));
      address = buf;
    } else if (family == AF_INET6) {
      auto* a6 = &reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr;
      inet_ntop(AF_INET6, a6, buf, sizeof(buf));
      // A link-local address means nothing without the interface it is on (its zone, the socket's scope id).
      address = IN6_IS_ADDR_LINKLOCAL(a6) ? std::string(buf) + "%" + i->ifa_name : std::string(buf);
    } else {
      continue;
    }
    out.push_back({i->ifa_name, address, (i->ifa_flags & IFF_LOOPBACK) != 0});
  }
  freeifaddrs(list);
  // IPv4, then global IPv6, then link-local: an interface's first entry is the address it is used by.
  auto preference = [](const NetworkInterface& n) { return familyOf(n) == AF_INET ? 0 : isLinkLocal(n) ? 2 : 1; };
  std::stable_sort(out.begin(), out.end(),
                   [&](const NetworkInterface& a, const NetworkInterface& b) { return preference(a) < preference(b); });
  return out;
}

int familyOf(const NetworkInterface& nic) { return nic.address.find(':') == std::string::npos ? AF_INET : AF_INET6; }

bool isLinkLocal(const NetworkInterface& nic) {
  in6_addr a{};
  const std::string bare = nic.address.substr(0, nic.address.find('%'));
  return inet_pton(AF_INET6, bare.c_str(), &a) == 1 && IN6_IS_ADDR_LINKLOCAL(&a);
}

bool interfaceMatches(const std::string& spec, const std::string& name) {
  const NameList list = NameList::parse(spec);
  if (list.blank) return !list.exclude;
  bool hit = false;
  for (const std::string& item : list.items) hit |= list.names(item, name);
  return list.exclude ? !hit : hit;
}

namespace {

// An interface's kind: its name without trailing digits ("eth" for eth0 and eth1, "enp1s0f" for enp1s0f0).
std::string kindOf(const std::string& name) {
  size_t end = name.size();
  while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
  return name.substr(0, end);
}

[[noreturn]] void noneMatches(const std::vector<NetworkInterface>& all, const std::string& spec, int family) {
  std::string names;
  for (const auto& i : all) names += (names.empty() ? "" : ", ") + i.name + " " + i.address;
  const std::string familyText = family == AF_INET    ? " and CHORUS_SOCKET_FAMILY=AF_INET"
                                 : family == AF_INET6 ? " and CHORUS_SOCKET_FAMILY=AF_INET6"
                                                      : "";
  throwInvalidArgument("no network interface matches CHORUS_SOCKET_IFNAME='" + spec + "'" + familyText +
                       " (this host has: " + (names.empty() ? "none" : names) + ")");
}

}  // namespace

std::vector<NetworkInterface> chooseRails(const std::vector<NetworkInterface>& listed, const std::string& spec,
                                          size_t maxRails, int family) {
  std::vector<NetworkInterface> all;
  for (const auto& i : listed) {
    if (family == AF_UNSPEC || familyOf(i) == family) all.push_back(i);
  }
  std::vector<NetworkInterface> rails;
  auto taken = [&](const NetworkInterface& i) {
    return std::any_of(rails.begin(), rails.end(), [&](const NetworkInterface& r) { return r.name == i.name; });
  };
  if (!spec.empty()) {
    for (const auto& i : all) {
      if (rails.size() < maxRails && interfaceMatches(spec, i.name) && !taken(i)) rails.push_back(i);
    }
  } else {
    for (const auto& i : all) {
      if (!i.loopback && !interfaceMatches("docker", i.name)) {
        rails.push_back(i);
        break;
      }
    }
    if (rails.empty()) {
      for (const auto& i : all) {
        if (i.loopback) return {i};
      }
    } else {
      const NetworkInterface first = rails[0];
      for (const auto& i : all) {
        if (rails.size() < maxRails && !i.loopback && !taken(i) && kindOf(i.name) == kindOf(first.name) &&
            familyOf(i) == familyOf(first) && isLinkLocal(i) == isLinkLocal(first)) {
          rails.push_back(i);
        }
      }
    }
  }
  if (rails.empty()) noneMatches(listed, spec, family);
  return rails;
}

std::vector<NetworkInterface> chooseNetworkInterfaces(const std::string& spec, size_t maxRails, int family) {
  return chooseRails(listNetworkInterfaces(), spec, maxRails, family);
}

NetworkInterface chooseNetworkInterface(const std::string& spec, int family) {
  return chooseNetworkInterfaces(spec, 1, family)[0];
}

bool interfaceIsUp(const std::string& name) {
  ifreq req{};
  if (name.size() >= sizeof(req.ifr_name)) return false;
  std::memcpy(req.ifr_name, name.data(), name.size());
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;  // cannot tell: say up, and let the link's own errors speak
  const int r = ::ioctl(fd, SIOCGIFFLAGS, &req);
  const int err = errno;
  ::close(fd);
  if (r != 0) return err != ENODEV && err != ENXIO;  // gone is down; any other failure cannot tell
  return (req.ifr_flags & IFF_UP) && (req.ifr_flags & IFF_RUNNING);
}

}  // namespace chorus
