// The emulators' entry points, handed to the loader (core/emulation_library.h) while the program starts, where a
// program links the emulators' objects: chorus_internals's tests and tools in a tree built with CHORUS_EMULATION=ON.
// They then find the emulators in themselves, with no libchorus_emulation.so to load and no second copy of the
// internals. That library holds these objects too; there the registration reaches only its own copy of the loader.
#include <cstring>

#include "core/emulation_library.h"
#include "device/device_emulation.h"
#ifdef CHORUS_HAVE_VERBS
#include "transports/ib/verbs_api.h"
#endif

namespace chorus {
namespace {

void* linkedEmulationEntry(const char* symbol) {
  if (std::strcmp(symbol, "chorus_emulation_device_api") == 0) {
    return reinterpret_cast<void*>(&chorus_emulation_device_api);
  }
#ifdef CHORUS_HAVE_VERBS
  if (std::strcmp(symbol, "chorus_emulation_soft_verbs") == 0) {
    return reinterpret_cast<void*>(&chorus_emulation_soft_verbs);
  }
#endif
  return nullptr;
}

[[maybe_unused]] const bool linkedEmulationRegistered = (registerLinkedEmulation(&linkedEmulationEntry), true);

}  // namespace
}  // namespace chorus
