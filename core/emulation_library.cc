#include "core/emulation_library.h"

#include <dlfcn.h>
#include <link.h>

#include <filesystem>
#include <string>

#include "core/error.h"

namespace chorus {
namespace {

constexpr char kLibraryName[] = "libchorus_emulation.so";

// Constant-initialized, so that a registration made while the program starts is never overwritten afterwards by
// this file's own initialization.
void* (*linkedLookup)(const char* symbol) = nullptr;

std::string dlerrorText() {
  const char* text = dlerror();
  return text ? text : "no error text";
}

// The folder of the module this code is linked into (libchorus.so, or a program linking chorus_internals), with its
// trailing '/': "" where the system cannot say, and the library is then searched as the dynamic linker searches.
std::string moduleFolder() {
  Dl_info info{};
  link_map* module = nullptr;
  void* self = reinterpret_cast<void*>(&moduleFolder);
  if (dladdr1(self, &info, reinterpret_cast<void**>(&module), RTLD_DL_LINKMAP) == 0 || module == nullptr) return "";
  std::string path = module->l_name;
  if (path.empty()) {
    // The program itself, which its link map leaves unnamed (dladdr would give argv[0], relative to where it started).
    std::error_code error;
    path = std::filesystem::read_symlink("/proc/self/exe", error).string();
  }
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

struct CompanionLibrary {
  std::string path;
  void* handle = nullptr;
  std::string problem;  // why handle is null
};

// Loaded once per process, on the first entry point asked for; kept open for the process's life (the emulated
// device and the software fabric have threads and state that outlive any one communicator).
const CompanionLibrary& companionLibrary() {
  static const CompanionLibrary library = [] {
    CompanionLibrary l;
    l.path = moduleFolder() + kLibraryName;
    // RTLD_LOCAL: its own copies of the internals it uses stay its own. RTLD_NOW: a missing symbol fails here.
    void* handle = dlopen(l.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      l.problem = "dlopen: " + dlerrorText();
      return l;
    }
    auto revision = reinterpret_cast<int (*)()>(dlsym(handle, "chorus_emulation_interface"));
    if (revision == nullptr) {
      l.problem = "dlsym(chorus_emulation_interface): " + dlerrorText();
    } else if (revision() != kEmulationInterface) {
      l.problem = "it speaks emulation interface " + std::to_string(revision()) + ", this build " +
                  std::to_string(kEmulationInterface) + " (built from other sources)";
    } else {
      l.handle = handle;
      return l;
    }
    dlclose(handle);
    return l;
  }();
  return library;
}

}  // namespace

void registerLinkedEmulation(void* (*lookup)(const char* symbol)) { linkedLookup = lookup; }

void* emulationEntry(const char* symbol, const char* setting) {
  if (linkedLookup != nullptr) {
    if (void* entry = linkedLookup(symbol)) return entry;
  }
  const CompanionLibrary& library = companionLibrary();
  std::string problem = library.problem;
  if (library.handle != nullptr) {
    dlerror();
    if (void* entry = dlsym(library.handle, symbol)) return entry;
    problem = "dlsym(" + std::string(symbol) + "): " + dlerrorText();
  }
  throw Error(chorusInvalidArgument, std::string(setting) +
                                         "=1 asks for Chorus's emulators, which are not part of libchorus.so or of "
                                         "this program: loading " +
                                         library.path + " failed: " + problem +
                                         ". -DCHORUS_EMULATION=ON (the default where the tests are built) builds "
                                         "them into " +
                                         kLibraryName + ", which must sit beside libchorus.so");
}

}  // namespace chorus
