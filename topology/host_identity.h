// Which machine this process runs on, as a string equal on every process of one host (hostname + boot id).
#pragma once

#include <string>

namespace chorus {

// Longest CHORUS_HOST_ID accepted.
inline constexpr size_t kMaxHostIdBytes = 1024;

// CHORUS_HOST_ID when set (chorusrun --hosts sets it to emulate several hosts on one); otherwise
// "hostname/boot-id", the same for every process of this boot of this machine. Throws chorusInvalidArgument when
// CHORUS_HOST_ID is longer than kMaxHostIdBytes or holds control characters.
std::string hostIdentity();
// "hostname/boot-id" whatever CHORUS_HOST_ID says: which ranks really share cores (emulated hosts do).
std::string machineIdentity();

}  // namespace chorus
