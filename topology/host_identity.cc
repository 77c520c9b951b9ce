#include "topology/host_identity.h"

#include <unistd.h>

#include <fstream>

namespace chorus {

std::string hostIdentity() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0) name[0] = '\0';
  std::string boot;
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  if (!(f >> boot)) boot = "no-boot-id";
  return std::string(name) + "/" + boot;
}

}  // namespace chorus
