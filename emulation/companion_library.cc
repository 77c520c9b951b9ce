// What libchorus_emulation.so alone defines: the revision of the emulators' interface it was built with, which the
// loader (core/emulation_library.h) checks before it calls any entry point. The library exists so that
// libchorus.so carries no emulator: a program that asks for one (CHORUS_IB_EMULATION, CHORUS_DEVICE_EMULATION) loads
// it from beside libchorus.so.
#include "core/emulation_library.h"

extern "C" [[gnu::visibility("default")]] int chorus_emulation_interface() { return chorus::kEmulationInterface; }
