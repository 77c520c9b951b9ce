// How the library reaches the emulators (emulation/: the software verbs device behind CHORUS_IB_EMULATION, the
// emulated GPU runtime behind CHORUS_DEVICE_EMULATION), which are not part of libchorus.so: by the name of an entry
// point, found in the program itself where it links them (the tests and tools of a tree built with
// CHORUS_EMULATION=ON, through chorus_internals), else in libchorus_emulation.so, loaded on first use from the folder
// of the module holding this code (libchorus.so's, or the program's).
#pragma once

namespace chorus {

// The emulators' interface revision, which libchorus_emulation.so reports (chorus_emulation_interface): a library
// built from other sources is refused rather than called with the wrong types. Change it with DeviceApi or VerbsApi.
inline constexpr int kEmulationInterface = 1;

// The address of the emulators' entry point `symbol`. Throws chorusInvalidArgument naming `setting` (what asked for
// the emulator, e.g. "CHORUS_DEVICE_EMULATION"), the library's path and the loader's own error where the program
// does not link them and the library cannot be loaded or lacks the entry point.
void* emulationEntry(const char* symbol, const char* setting);

// Called at start-up by the emulators' objects where a program links them (emulation/linked_entries.cc): `lookup`
// returns the address of an entry point by name, or null.
void registerLinkedEmulation(void* (*lookup)(const char* symbol));

}  // namespace chorus
