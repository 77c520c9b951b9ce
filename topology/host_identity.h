// Which machine this process runs on, as a string equal on every process of one host (hostname + boot id).
#pragma once

#include <string>

namespace chorus {

// "hostname/boot-id"; the same for every process of this boot of this machine.
std::string hostIdentity();

}  // namespace chorus
