#include "topology/host_identity.h"

#include <unistd.h>

#include <fstream>

#include "core/error.h"
#include "core/params.h"

namespace chorus {

std::string hostIdentity() {
  if (params::isSet("CHORUS_HOST_ID")) {
    std::string id = params::hostId();
    if (id.size() > kMaxHostIdBytes) {
      throwInvalidArgument("CHORUS_HOST_ID is " + std::to_string(id.size()) + " bytes long; at most " +
                           std::to_string(kMaxHostIdBytes) + " are allowed");
    }
    for (unsigned char c : id) {
      if (c < 0x20 || c == 0x7f) throwInvalidArgument("CHORUS_HOST_ID contains a control character");
    }
    return id;
  }
  return machineIdentity();
}

std::string machineIdentity() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0) name[0] = '\0';
  std::string boot;
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  if (!(f >> boot)) boot = "no-boot-id";
  return std::string(name) + "/" + boot;
}

}  // namespace chorus
