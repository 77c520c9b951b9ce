// How the library finds the emulators, which libchorus.so does not contain: a program that links them (as this one
// does, through chorus_internals) finds them in itself; anything else loads libchorus_emulation.so, and where that
// fails the setting that asked for an emulator fails with an error that names the setting and the file.
#include "core/emulation_library.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "device/device_emulation.h"
#include "tests/harness/build_tree.h"
#ifdef CHORUS_HAVE_VERBS
#include "transports/ib/verbs_api.h"
#endif

namespace chorus {
namespace {

TEST(EmulationLibraryTest, AProgramLinkingTheEmulatorsFindsThemInItself) {
  EXPECT_EQ(emulationEntry("chorus_emulation_device_api", "CHORUS_DEVICE_EMULATION"),
            reinterpret_cast<void*>(&chorus_emulation_device_api));
#ifdef CHORUS_HAVE_VERBS
  EXPECT_EQ(emulationEntry("chorus_emulation_soft_verbs", "CHORUS_IB_EMULATION"),
            reinterpret_cast<void*>(&chorus_emulation_soft_verbs));
#endif
}

// An entry point the program lacks is looked for in libchorus_emulation.so beside the program, where the build
// tree has none (it sits beside libchorus.so).
TEST(EmulationLibraryTest, ALibraryThatCannotBeLoadedIsAnInvalidArgumentNamingTheSettingAndTheFile) {
  try {
    emulationEntry("chorus_emulation_no_such_entry", "CHORUS_EXAMPLE_EMULATION");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), chorusInvalidArgument) << what;
    EXPECT_NE(what.find("CHORUS_EXAMPLE_EMULATION=1"), std::string::npos) << what;
    EXPECT_NE(what.find(test::buildTreePath("tests/libchorus_emulation.so") + " failed: dlopen: "), std::string::npos)
        << what;
    EXPECT_NE(what.find("-DCHORUS_EMULATION=ON"), std::string::npos) << what;
  }
}

// The library libchorus.so loads: complete on its own (every symbol resolved at load), of this build's interface,
// with entry points that work.
TEST(EmulationLibraryTest, TheBuildTreesLibraryLoadsAloneAndAnswers) {
  const std::string path = test::buildTreePath("libchorus_emulation.so");
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  auto revision = reinterpret_cast<int (*)()>(dlsym(library, "chorus_emulation_interface"));
  ASSERT_NE(revision, nullptr) << dlerror();
  EXPECT_EQ(revision(), kEmulationInterface);
  auto device = reinterpret_cast<decltype(&chorus_emulation_device_api)>(dlsym(library, "chorus_emulation_device_api"));
  ASSERT_NE(device, nullptr) << dlerror();
  EXPECT_STREQ(device()->name(), "emulated");
  EXPECT_NE(device(), chorus_emulation_device_api()) << "the library's emulated device is its own, not this program's";
#ifdef CHORUS_HAVE_VERBS
  auto verbs = reinterpret_cast<decltype(&chorus_emulation_soft_verbs)>(dlsym(library, "chorus_emulation_soft_verbs"));
  ASSERT_NE(verbs, nullptr) << dlerror();
  EXPECT_STREQ(verbs(true)->origin, "chorus soft verbs");
#endif
  // Kept loaded: its emulated device is never destroyed, as in any process that uses it.
}

}  // namespace
}  // namespace chorus
