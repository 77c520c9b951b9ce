/* A job for the metrics test (prometheus_scrape_test.sh): every rank makes CALLS allreduces of COUNT float32s, says
   so by creating DIR/ready.<rank>, and stays alive, its communicator intact, until the test opens DIR/release (a
   FIFO) for writing, or for at most WAIT_SECONDS. Usage: metrics_job DIR CALLS COUNT WAIT_SECONDS. */
#include <chorus/chorus.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char* what, chorusResult_t r, chorusComm_t comm) {
  fprintf(stderr, "metrics_job: %s: %s: %s\n", what, chorusGetErrorString(r), chorusGetLastError(comm));
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: metrics_job DIR CALLS COUNT WAIT_SECONDS\n");
    return 2;
  }
  const char* dir = argv[1];
  const int calls = atoi(argv[2]);
  const size_t count = (size_t)atol(argv[3]);
  const int waitSeconds = atoi(argv[4]);
  char path[4096];
  /* Opened before saying ready, without blocking: the test's writer cannot come and go unseen. */
  snprintf(path, sizeof(path), "%s/release", dir);
  const int release = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (release < 0) {
    fprintf(stderr, "metrics_job: open %s: %s\n", path, strerror(errno));
    return 1;
  }
  chorusComm_t comm;
  chorusResult_t r = chorusCommInitFromEnv(&comm);
  if (r != chorusSuccess) return fail("init", r, NULL);
  int rank = 0;
  chorusCommUserRank(comm, &rank);
  float* data = calloc(count > 0 ? count : 1, sizeof(float));
  for (int i = 0; i < calls; ++i) {
    r = chorusAllReduce(data, data, count, chorusFloat32, chorusSum, comm, NULL);
    if (r != chorusSuccess) return fail("allreduce", r, comm);
  }
  snprintf(path, sizeof(path), "%s/ready.%d", dir, rank);
  const int ready = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (ready < 0) {
    fprintf(stderr, "metrics_job: rank %d: open %s: %s\n", rank, path, strerror(errno));
    return 1;
  }
  close(ready);
  /* Linux: a FIFO's read end polls readable (or hung up) only once a writer has opened it. */
  struct pollfd p = {release, POLLIN, 0};
  int n;
  do {
    n = poll(&p, 1, waitSeconds * 1000);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) fprintf(stderr, "metrics_job: rank %d: not released within %d s\n", rank, waitSeconds);
  close(release);
  free(data);
  r = chorusCommDestroy(comm);
  if (r != chorusSuccess) return fail("destroy", r, NULL);
  return n > 0 ? 0 : 1;
}
