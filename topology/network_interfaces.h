// Which IP interfaces this host has, and which one Chorus uses (CHORUS_SOCKET_IFNAME, NCCL's syntax).
#pragma once

#include <sys/socket.h>

#include <string>
#include <vector>

namespace chorus {

struct NetworkInterface {
  std::string name;     // "eth0"
  std::string address;  // numeric IPv4 or IPv6: "10.0.0.2", "fd00::2", link-local with its zone "fe80::2%eth0"
  bool loopback = false;
};

// AF_INET or AF_INET6, from the address's text.
int familyOf(const NetworkInterface& nic);
// Whether the address is IPv6 link-local (fe80::/10): usable only with a zone, the interface it leaves by.
bool isLinkLocal(const NetworkInterface& nic);

// Every up interface with an IP address, IPv4 first, then global IPv6, then link-local IPv6 (each in the kernel's
// order): an interface's first entry is its preferred address.
std::vector<NetworkInterface> listNetworkInterfaces();

// NCCL's rule: "" = any; "eth,ib" = name starts with one of; "^docker" = starts with none of; "=eth0" = exactly
// (combinable: "^=lo" excludes exactly "lo"). Returns whether `name` is selected by `spec`.
bool interfaceMatches(const std::string& spec, const std::string& name);

// The interface to use: the first matching `spec` when spec is set; otherwise the first that is not loopback
// or a container bridge, else loopback. `family` (AF_INET, AF_INET6, AF_UNSPEC: CHORUS_SOCKET_FAMILY) keeps only
// addresses of that family. Throws chorusInvalidArgument listing the interfaces when none matches.
NetworkInterface chooseNetworkInterface(const std::string& spec, int family = AF_UNSPEC);

// The interfaces TCP stripes over (its rails), first one first, at most maxRails, one address each (IPv4 where
// the interface has one): with `spec`, every interface it names; without, the default interface of
// chooseNetworkInterface and every other up interface of its kind (the same name but for trailing digits, as
// eth0 and eth1, and the same address family). Throws as chooseNetworkInterface does.
std::vector<NetworkInterface> chooseNetworkInterfaces(const std::string& spec, size_t maxRails, int family = AF_UNSPEC);
// The same over a given list, in that list's order (what the above applies to this host's).
std::vector<NetworkInterface> chooseRails(const std::vector<NetworkInterface>& all, const std::string& spec,
                                          size_t maxRails, int family = AF_UNSPEC);

// Whether the interface exists and is up with its carrier (IFF_UP and IFF_RUNNING).
bool interfaceIsUp(const std::string& name);

}  // namespace chorus
