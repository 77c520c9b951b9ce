// Names this process among those of the machine: CUDA IPC handles do not open in the process that exported them,
// so peers that are threads of one process use each other's device pointers directly (windows) or stage (device
// connections) instead of trying. Random rather than the pid, which processes in different pid namespaces can
// share; made anew in a fork's child.
#pragma once

#include <cstdint>

namespace chorus {

uint64_t processToken();

}  // namespace chorus
