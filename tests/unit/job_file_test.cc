// The job file chorusrun leaves for chorus-inspect (core/bootstrap/job_file.h): written 0600 in a 0700 directory and
// read back; refused when the file or its directory is open to others or is a symbolic link.
#include "core/bootstrap/job_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "core/error.h"

namespace chorus {
namespace {

class JobFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char folder[] = "/tmp/chorus-job-file-test.XXXXXX";
    ASSERT_NE(mkdtemp(folder), nullptr);
    root_ = folder;
    const char* old = getenv("XDG_RUNTIME_DIR");
    hadRuntime_ = old != nullptr;
    if (hadRuntime_) oldRuntime_ = old;
    setenv("XDG_RUNTIME_DIR", root_.c_str(), 1);
  }
  void TearDown() override {
    if (hadRuntime_) {
      setenv("XDG_RUNTIME_DIR", oldRuntime_.c_str(), 1);
    } else {
      unsetenv("XDG_RUNTIME_DIR");
    }
    ASSERT_EQ(system(("rm -rf " + root_).c_str()), 0);
  }
  std::string root_, oldRuntime_;
  bool hadRuntime_ = false;
};

mode_t modeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

TEST_F(JobFileTest, WrittenPrivateAndReadBack) {
  const std::string path = job_file::write({"127.0.0.1:41000", "0123abcd", "f00d", 77});
  EXPECT_EQ(path, root_ + "/chorus/job-127.0.0.1_41000");
  EXPECT_EQ(job_file::pathFor("127.0.0.1:41000"), path);
  EXPECT_EQ(modeOf(root_ + "/chorus"), 0700u);
  EXPECT_EQ(modeOf(path), 0600u);
  const job_file::JobCredentials job = job_file::read(path);
  EXPECT_EQ(job.store, "127.0.0.1:41000");
  EXPECT_EQ(job.jobId, "0123abcd");
  EXPECT_EQ(job.secret, "f00d");
  EXPECT_EQ(job.pid, 77);
  job_file::remove(path);
  EXPECT_NE(access(path.c_str(), F_OK), 0);
  job_file::remove(path);  // gone already: quiet
}

TEST_F(JobFileTest, AnEmptySecretReadsBackEmpty) {
  const std::string path = job_file::write({"[::1]:41001", "job", "", 5});
  const job_file::JobCredentials job = job_file::read(path);
  EXPECT_EQ(job.secret, "");
  EXPECT_EQ(job.pid, 5);
}

TEST_F(JobFileTest, FilesAndDirectoriesOpenToOthersAreRefused) {
  const std::string path = job_file::write({"127.0.0.1:41002", "job", "secret", 1});
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  try {
    job_file::read(path);
    FAIL() << "a file open to others was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("open to group or others: refused"), std::string::npos) << e.what();
  }
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  ASSERT_EQ(chmod((root_ + "/chorus").c_str(), 0755), 0);
  EXPECT_THROW(job_file::read(path), Error);
  EXPECT_THROW(job_file::write({"127.0.0.1:41002", "job", "secret", 1}), Error);  // nor written into
}

TEST_F(JobFileTest, ASymbolicLinkIsRefused) {
  const std::string path = job_file::write({"127.0.0.1:41003", "job", "secret", 1});
  const std::string link = root_ + "/chorus/job-link";
  ASSERT_EQ(symlink(path.c_str(), link.c_str()), 0);
  EXPECT_THROW(job_file::read(link), Error);
}

}  // namespace
}  // namespace chorus
