// What each rank chorusrun starts is given: its environment, the program path, the job id.
#pragma once

#include <string>
#include <vector>

namespace chorus::launcher {

// 16 lowercase hex characters from getrandom(); throws chorusSystemError if the kernel gives none.
std::string makeJobId();

// `base` ("NAME=value" entries, null-terminated like environ) without the variables chorusrun sets, followed by
// CHORUS_RANK, CHORUS_WORLD_SIZE, CHORUS_LOCAL_RANK, CHORUS_STORE, CHORUS_STORE_SERVED=1 and CHORUS_JOB_ID.
std::vector<std::string> rankEnvironment(const char* const* base, int rank, int worldSize, const std::string& store,
                                         const std::string& jobId);

// The path execve() should run for `program`, searched in PATH as execvp() does; empty when there is none.
std::string findExecutable(const std::string& program, const char* pathVariable);

// A null-terminated char* array viewing `strings`, for execve(); valid while `strings` lives unchanged.
std::vector<char*> pointerArray(std::vector<std::string>& strings);

}  // namespace chorus::launcher
