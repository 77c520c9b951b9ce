// Where a launcher leaves its job's credentials (job id and secret) for its owner's tools, so that
// `chorus-inspect 127.0.0.1:PORT` needs nothing but the store's address: a file only its owner can read, in a
// directory only its owner can enter, named after the store's address. It gives no one anything new: the same user
// can read the secret in any rank's environment (/proc/PID/environ), and nobody else can read either.
#pragma once

#include <string>

namespace chorus::job_file {

struct JobCredentials {
  std::string store;   // the store's "host:port"
  std::string jobId;   // CHORUS_JOB_ID
  std::string secret;  // CHORUS_SECRET ("": the store does not authenticate)
  long pid = 0;        // the launcher's process, to tell a file left by one that was killed
};

// $XDG_RUNTIME_DIR/chorus when XDG_RUNTIME_DIR is set, otherwise /tmp/chorus-UID.
std::string directory();
// The file of the job whose store is at `store` ("host:port"), in directory().
std::string pathFor(const std::string& store);

// Creates directory() when missing (0700), checks it (see read) and writes the file, 0600, whole or not at all (a
// temporary renamed over it). Returns its path. Throws chorusSystemError or chorusInvalidArgument naming the path.
std::string write(const JobCredentials& job);
// Reads a job file after checking it and its directory: each must be this user's, not a symbolic link, and closed
// to group and others; a file anyone else could have written or read is refused. Throws as write does.
JobCredentials read(const std::string& path);
// Removes the file; quiet when it is gone already.
void remove(const std::string& path);

}  // namespace chorus::job_file
