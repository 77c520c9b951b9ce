#include "core/bootstrap/job_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "core/error.h"

namespace chorus::job_file {
namespace {

// Only this user's, not a link, of the expected type, and closed to group and others.
void checkOwnedAndPrivate(const struct stat& st, const std::string& path, bool wantDirectory) {
  const bool typeOk = wantDirectory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
  if (!typeOk) {
    throwInvalidArgument("job file: " + path + " is not a " + (wantDirectory ? "directory" : "regular file"));
  }
  if (st.st_uid != geteuid()) {
    throwInvalidArgument("job file: " + path + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user (" +
                         std::to_string(geteuid()) + "): refused");
  }
  if ((st.st_mode & 077) != 0) {
    std::ostringstream mode;
    mode << std::oct << (st.st_mode & 0777);
    throwInvalidArgument("job file: " + path + " has mode 0" + mode.str() + ", open to group or others: refused");
  }
}

void checkDirectory(const std::string& dir) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) throwSystemError("job file: " + dir, "lstat", errno);
  checkOwnedAndPrivate(st, dir, true);
}

}  // namespace

std::string directory() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (runtime != nullptr && runtime[0] != '\0') return std::string(runtime) + "/chorus";
  return "/tmp/chorus-" + std::to_string(geteuid());
}

std::string pathFor(const std::string& store) {
  std::string name = "job-";
  for (char c : store) {
    const bool plain =
        (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '-';
    name += plain ? c : '_';
  }
  return directory() + "/" + name;
}

std::string write(const JobCredentials& job) {
  const std::string dir = directory();
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) throwSystemError("job file: " + dir, "mkdir", errno);
  checkDirectory(dir);
  const std::string path = pathFor(job.store);
  const std::string temporary = path + ".tmp" + std::to_string(getpid());
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throwSystemError("job file: " + temporary, "open", errno);
  const std::string text = "store " + job.store + "\njob " + job.jobId + "\nsecret " + job.secret + "\npid " +
                           std::to_string(job.pid) + "\n";
  const ssize_t written = ::write(fd, text.data(), text.size());
  const int writeErr = written < 0 ? errno : EIO;
  if (close(fd) != 0 || written != static_cast<ssize_t>(text.size())) {
    unlink(temporary.c_str());
    throwSystemError("job file: " + temporary, "write", writeErr);
  }
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(temporary.c_str());
    throwSystemError("job file: " + path, "rename", err);
  }
  return path;
}

JobCredentials read(const std::string& path) {
  const size_t slash = path.rfind('/');
  checkDirectory(slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash));
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throwSystemError("job file: " + path, "open", errno);
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    throwSystemError("job file: " + path, "fstat", err);
  }
  try {
    checkOwnedAndPrivate(st, path, false);
  } catch (...) {
    close(fd);
    throw;
  }
  std::string text(4096, '\0');
  const ssize_t got = ::read(fd, text.data(), text.size());
  const int readErr = errno;
  close(fd);
  if (got < 0) throwSystemError("job file: " + path, "read", readErr);
  text.resize(static_cast<size_t>(got));
  JobCredentials job;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t space = line.find(' ');
    const std::string key = line.substr(0, space), value = space == std::string::npos ? "" : line.substr(space + 1);
    if (key == "store") job.store = value;
    if (key == "job") job.jobId = value;
    if (key == "secret") job.secret = value;
    if (key == "pid") job.pid = std::atol(value.c_str());
  }
  if (job.store.empty() || job.jobId.empty()) throwInvalidArgument("job file: " + path + " names no store or job id");
  return job;
}

void remove(const std::string& path) {
  if (!path.empty()) unlink(path.c_str());
}

}  // namespace chorus::job_file
