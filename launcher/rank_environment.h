// What each rank chorusrun starts is given: its environment, the program path, the job id.
#pragma once

#include <string>
#include <vector>

namespace chorus::launcher {

// 16 lowercase hex characters from getrandom(); throws chorusSystemError if the kernel gives none.
std::string makeJobId();
// 64 lowercase hex characters (32 random bytes from getrandom()), for CHORUS_SECRET; throws like makeJobId().
std::string makeSecret();

// What every rank of one chorusrun job shares.
struct JobEnvironment {
  int worldSize = 1;
  std::string store;  // host:port of the store chorusrun serves
  std::string jobId;
  std::string secret;      // CHORUS_SECRET given to every rank ("": leave the inherited value alone)
  int hosts = 0;           // --hosts: emulated hosts; 0 = not emulating (CHORUS_HOST_ID left as inherited)
  std::string hostIdBase;  // the real host identity; emulated host h is "<hostIdBase>#h<h>"
};

// `base` ("NAME=value" entries, null-terminated like environ) without the variables chorusrun sets, followed by
// CHORUS_RANK, CHORUS_WORLD_SIZE, CHORUS_LOCAL_RANK, CHORUS_STORE, CHORUS_STORE_SERVED=1, CHORUS_JOB_ID, and
// CHORUS_SECRET when job.secret is set. With job.hosts > 0, rank r belongs to emulated host h (contiguous
// blocks, the first worldSize % hosts one larger): CHORUS_HOST_ID=<hostIdBase>#h<h> and CHORUS_LOCAL_RANK is
// its index within the block; otherwise CHORUS_LOCAL_RANK=r.
std::vector<std::string> rankEnvironment(const char* const* base, int rank, const JobEnvironment& job);

// The path execve() should run for `program`, searched in PATH as execvp() does; empty when there is none.
std::string findExecutable(const std::string& program, const char* pathVariable);

// A null-terminated char* array viewing `strings`, for execve(); valid while `strings` lives unchanged.
std::vector<char*> pointerArray(std::vector<std::string>& strings);

}  // namespace chorus::launcher
