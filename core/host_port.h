// "host:port" strings (the store's address, a TCP peer's address). IPv6 hosts are written in brackets,
// "[fd00::1]:29500", a link-local one with its zone, "[fe80::1%eth0]:29500".
#pragma once

#include <cstdint>
#include <string>

namespace chorus {

// Splits "host:port" or "[v6]:port"; throws chorusInvalidArgument naming `what` on a malformed string, an IPv6
// address without brackets among them (in "fd00::1:29500" the port cannot be told from the address).
void splitHostPort(const std::string& s, const std::string& what, std::string* host, uint16_t* port);
// "host:port", the host in brackets when it is an IPv6 address.
std::string joinHostPort(const std::string& host, uint16_t port);
// A host named by MASTER_ADDR and the like: an IPv6 address written bare, in brackets, or a name; returns it as
// splitHostPort gives hosts back (no brackets).
std::string bareHost(const std::string& host);
// CHORUS_SOCKET_FAMILY (NCCL_SOCKET_FAMILY's values): "" = AF_UNSPEC (either), "AF_INET", "AF_INET6". Throws
// chorusInvalidArgument naming `what` for anything else.
int parseSocketFamily(const std::string& text, const std::string& what);
// A peer's link-local IPv6 address ("fe80::1%eth0") with the zone of this end's interface `ifname` instead of the
// peer's: a zone names an interface of the host that dials. Any other host comes back as it is.
std::string withLocalZone(const std::string& host, const std::string& ifname);

}  // namespace chorus
