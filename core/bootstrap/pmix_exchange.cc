#include "core/bootstrap/pmix_exchange.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>

#include "core/error.h"
#include "core/logging.h"
#include "core/params.h"

namespace chorus {
namespace {

// The few PMIx types and calls Chorus uses, declared as the PMIx Standard v4 defines them (the ABI of OpenPMIx 3.x
// and 4.x, which Open MPI 4.1 and Slurm use), so that building needs no PMIx header.
constexpr size_t kNspaceChars = 256;  // PMIX_MAX_NSLEN + 1
constexpr size_t kKeyChars = 512;     // PMIX_MAX_KEYLEN + 1
using pmix_status_t = int;
using pmix_rank_t = uint32_t;
constexpr pmix_status_t PMIX_SUCCESS = 0;
constexpr pmix_rank_t PMIX_RANK_WILDCARD = UINT32_MAX - 1;
constexpr uint16_t PMIX_BOOL = 1, PMIX_STRING = 3, PMIX_INT = 6, PMIX_UINT32 = 14;
constexpr uint8_t PMIX_GLOBAL = 3;
constexpr const char* PMIX_JOB_SIZE = "pmix.job.size";
constexpr const char* PMIX_COLLECT_DATA = "pmix.collect";
constexpr const char* PMIX_TIMEOUT = "pmix.timeout";

struct pmix_proc_t {
  char nspace[kNspaceChars];
  pmix_rank_t rank;
};
struct pmix_value_t {
  uint16_t type;
  union {
    bool flag;
    char* string;
    int integer;
    uint32_t uint32;
    unsigned char size[24];  // the widest member of the standard's union (pmix_envar_t)
  } data;
};
struct pmix_info_t {
  char key[kKeyChars];
  uint32_t flags;
  pmix_value_t value;
};
static_assert(sizeof(pmix_proc_t) == 260 && sizeof(pmix_value_t) == 32 && sizeof(pmix_info_t) == 552,
              "PMIx v4 ABI layout");

// Where libpmix is looked for unless CHORUS_PMIX_LIBRARY names it: the dynamic linker's search path (LD_LIBRARY_PATH,
// the ld.so cache), then Debian's and Ubuntu's private directory of libpmix2.
constexpr const char* kLibraries[] = {"libpmix.so.2", "libpmix.so", "/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so.2",
                                      "/usr/lib/aarch64-linux-gnu/pmix2/lib/libpmix.so.2"};

struct PmixApi {
  pmix_status_t (*init)(pmix_proc_t*, pmix_info_t*, size_t) = nullptr;
  pmix_status_t (*finalize)(const pmix_info_t*, size_t) = nullptr;
  pmix_status_t (*put)(uint8_t, const char*, pmix_value_t*) = nullptr;
  pmix_status_t (*commit)() = nullptr;
  pmix_status_t (*fence)(const pmix_proc_t*, size_t, const pmix_info_t*, size_t) = nullptr;
  pmix_status_t (*get)(const pmix_proc_t*, const char*, const pmix_info_t*, size_t, pmix_value_t**) = nullptr;
  const char* (*errorString)(pmix_status_t) = nullptr;
};

std::mutex pmixMutex;
PmixApi pmix;
bool pmixOpen = false;
pmix_proc_t selfProc{};

std::string pmixEnv(const char* name, const char* otherwise) {
  const char* v = std::getenv(name);
  return v ? v : otherwise;
}

// The rank for messages before PMIx_Init has said it.
int pmixRankFromEnv() { return std::atoi(pmixEnv("PMIX_RANK", "-1").c_str()); }

template <typename F>
void pmixSymbol(void* lib, const char* name, F* out, const std::string& origin, int rank) {
  dlerror();
  *out = reinterpret_cast<F>(dlsym(lib, name));
  if (!*out) {
    const char* err = dlerror();
    throw Error(chorusSystemError, errorContext(rank, "PMIx bootstrap") + ": " + origin + " lacks " + name + " (" +
                                       (err ? err : "no such symbol") + ")");
  }
}

void loadPmix(int rank) {
  if (pmix.init) return;
  std::string tried;
  void* lib = nullptr;
  std::string origin;
  const std::string named = params::pmixLibrary();
  std::vector<std::string> candidates(std::begin(kLibraries), std::end(kLibraries));
  if (!named.empty()) candidates = {named};
  for (const std::string& name : candidates) {
    // RTLD_GLOBAL: PMIx's own plugins resolve its symbols against the loaded library.
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (lib) {
      origin = name;
      break;
    }
    const char* err = dlerror();
    tried += (tried.empty() ? "" : "; ") + (err ? std::string(err) : name);
  }
  if (!lib) {
    throw Error(chorusSystemError,
                errorContext(rank, "PMIx bootstrap") +
                    ": a PMIx launcher started this process (PMIX_RANK, PMIX_NAMESPACE and PMIX_SERVER_URI* are set) "
                    "but libpmix could not be loaded: " +
                    tried +
                    ". Install libpmix2 (Debian, Ubuntu) or pmix, name it in CHORUS_PMIX_LIBRARY, or set "
                    "CHORUS_STORE=host:port to rendezvous without PMIx");
  }
  PmixApi a;
  pmixSymbol(lib, "PMIx_Init", &a.init, origin, rank);
  pmixSymbol(lib, "PMIx_Finalize", &a.finalize, origin, rank);
  pmixSymbol(lib, "PMIx_Put", &a.put, origin, rank);
  pmixSymbol(lib, "PMIx_Commit", &a.commit, origin, rank);
  pmixSymbol(lib, "PMIx_Fence", &a.fence, origin, rank);
  pmixSymbol(lib, "PMIx_Get", &a.get, origin, rank);
  pmixSymbol(lib, "PMIx_Error_string", &a.errorString, origin, rank);
  pmix = a;  // the library stays loaded: PMIx runs threads of its own until the process exits
}

void checkPmix(pmix_status_t status, const char* call, const std::string& what, int rank) {
  if (status == PMIX_SUCCESS) return;
  const char* text = pmix.errorString(status);
  throw Error(chorusSystemError, errorContext(rank, "PMIx bootstrap") + ": " + call + " " + what + " failed: " +
                                     (text ? text : "unknown PMIx status") + " (" + std::to_string(status) + ")");
}

void finalizeAtExit() {
  std::lock_guard<std::mutex> g(pmixMutex);
  if (!pmixOpen) return;
  pmixOpen = false;
  const pmix_status_t status = pmix.finalize(nullptr, 0);
  if (status != PMIX_SUCCESS) {
    CHORUS_WARN(static_cast<int>(selfProc.rank), "PMIx_Finalize failed: " << pmix.errorString(status));
  }
}

void openPmix(int rank) {
  if (pmixOpen) return;
  loadPmix(rank);
  checkPmix(pmix.init(&selfProc, nullptr, 0), "PMIx_Init",
            "(server " + pmixEnv("PMIX_SERVER_URI4", "") + pmixEnv("PMIX_SERVER_URI3", "") +
                pmixEnv("PMIX_SERVER_URI2", "") + ")",
            rank);
  pmixOpen = true;
  if (std::atexit(finalizeAtExit) != 0) {
    throw Error(chorusSystemError, errorContext(rank, "PMIx bootstrap") + ": atexit could not register PMIx_Finalize");
  }
}

pmix_info_t pmixFlag(const char* key) {
  pmix_info_t i{};
  std::strncpy(i.key, key, kKeyChars - 1);
  i.value.type = PMIX_BOOL;
  i.value.data.flag = true;
  return i;
}

pmix_info_t pmixSeconds(const char* key, double seconds) {
  pmix_info_t i{};
  std::strncpy(i.key, key, kKeyChars - 1);
  i.value.type = PMIX_INT;
  i.value.data.integer = seconds > 0 ? static_cast<int>(std::ceil(seconds)) : 0;  // 0: no bound, in both
  return i;
}

// The value's string, freed as PMIx's own PMIX_VALUE_RELEASE does (libpmix allocates it with malloc).
std::string takePmixString(pmix_value_t* v, const std::string& key, int rank) {
  std::string out;
  const bool isString = v->type == PMIX_STRING && v->data.string;
  if (isString) out = v->data.string;
  const uint16_t type = v->type;
  if (v->type == PMIX_STRING) std::free(v->data.string);
  std::free(v);
  if (!isString) {
    throw Error(chorusSystemError, errorContext(rank, "PMIx bootstrap") + ": PMIx_Get of " + key +
                                       " gave a value of PMIx type " + std::to_string(type) + ", not a string");
  }
  return out;
}

}  // namespace

bool pmixLaunched() {
  if (pmixEnv("PMIX_RANK", "").empty() || pmixEnv("PMIX_NAMESPACE", "").empty()) return false;
  for (char** e = ::environ; *e; ++e) {
    if (std::strncmp(*e, "PMIX_SERVER_URI", 15) == 0) return true;
  }
  return false;
}

PmixValues shareFromRankZero(const std::vector<std::string>& keys,
                             const std::function<PmixValues(const PmixJob&)>& publish, double timeoutSeconds,
                             PmixJob* job) {
  std::lock_guard<std::mutex> g(pmixMutex);
  const int envRank = pmixRankFromEnv();
  openPmix(envRank);
  const int rank = static_cast<int>(selfProc.rank);
  job->rank = rank;
  job->nspace = std::string(selfProc.nspace, strnlen(selfProc.nspace, kNspaceChars));

  pmix_proc_t everyone = selfProc;
  everyone.rank = PMIX_RANK_WILDCARD;
  pmix_value_t* size = nullptr;
  checkPmix(pmix.get(&everyone, PMIX_JOB_SIZE, nullptr, 0, &size), "PMIx_Get", PMIX_JOB_SIZE, rank);
  const bool sizeIsCount = size->type == PMIX_UINT32;
  job->size = sizeIsCount ? static_cast<int>(size->data.uint32) : 0;
  std::free(size);
  if (!sizeIsCount || job->size < 1) {
    throw Error(chorusSystemError, errorContext(rank, "PMIx bootstrap") + ": PMIx_Get of " + PMIX_JOB_SIZE +
                                       " in namespace " + job->nspace + " gave no positive uint32");
  }

  PmixValues values;
  if (rank == 0) {
    values = publish(*job);
    for (const auto& [key, text] : values) {
      pmix_value_t v{};
      v.type = PMIX_STRING;
      v.data.string = const_cast<char*>(text.c_str());  // PMIx_Put copies the value
      checkPmix(pmix.put(PMIX_GLOBAL, key.c_str(), &v), "PMIx_Put", key, rank);
    }
  }
  checkPmix(pmix.commit(), "PMIx_Commit", "", rank);
  const pmix_info_t fenceInfo[] = {pmixFlag(PMIX_COLLECT_DATA), pmixSeconds(PMIX_TIMEOUT, timeoutSeconds)};
  checkPmix(pmix.fence(nullptr, 0, fenceInfo, 2), "PMIx_Fence", "of namespace " + job->nspace, rank);
  if (rank == 0) return values;

  pmix_proc_t root = selfProc;
  root.rank = 0;
  const pmix_info_t getInfo[] = {pmixSeconds(PMIX_TIMEOUT, timeoutSeconds)};
  for (const std::string& key : keys) {
    pmix_value_t* v = nullptr;
    checkPmix(pmix.get(&root, key.c_str(), getInfo, 1, &v), "PMIx_Get", key + " from rank 0", rank);
    values[key] = takePmixString(v, key, rank);
  }
  return values;
}

}  // namespace chorus
