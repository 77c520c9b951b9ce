// "host:port" strings (the store's address, a TCP peer's address).
#pragma once

#include <cstdint>
#include <string>

namespace chorus {

// Splits "host:port" or "[v6]:port"; throws chorusInvalidArgument naming `what` on a malformed string.
void splitHostPort(const std::string& s, const std::string& what, std::string* host, uint16_t* port);

}  // namespace chorus
