// Which IP interfaces this host has, and which one Chorus uses (CHORUS_SOCKET_IFNAME, NCCL's syntax).
#pragma once

#include <string>
#include <vector>

namespace chorus {

struct NetworkInterface {
  std::string name;     // "eth0"
  std::string address;  // numeric IPv4 or IPv6 ("10.0.0.2", "fe80::1%eth0" is skipped)
  bool loopback = false;
};

// Every up interface with an IPv4 or global IPv6 address, in the kernel's order.
std::vector<NetworkInterface> listNetworkInterfaces();

// NCCL's rule: "" = any; "eth,ib" = name starts with one of; "^docker" = starts with none of; "=eth0" = exactly
// (combinable: "^=lo" excludes exactly "lo"). Returns whether `name` is selected by `spec`.
bool interfaceMatches(const std::string& spec, const std::string& name);

// The interface to use: the first matching `spec` when spec is set; otherwise the first that is not loopback
// or a container bridge, else loopback. Throws chorusInvalidArgument listing the interfaces when none matches.
NetworkInterface chooseNetworkInterface(const std::string& spec);

// The interfaces TCP stripes over (its rails), first one first, at most maxRails, one address each (IPv4 where
// the interface has one): with `spec`, every interface it names; without, the default interface of
// chooseNetworkInterface and every other up interface of its kind (the same name but for trailing digits, as
// eth0 and eth1, and the same address family). Throws as chooseNetworkInterface does.
std::vector<NetworkInterface> chooseNetworkInterfaces(const std::string& spec, size_t maxRails);
// The same over a given list, in that list's order (what the above applies to this host's).
std::vector<NetworkInterface> chooseRails(const std::vector<NetworkInterface>& all, const std::string& spec,
                                          size_t maxRails);

// Whether the interface exists and is up with its carrier (IFF_UP and IFF_RUNNING).
bool interfaceIsUp(const std::string& name);

}  // namespace chorus
