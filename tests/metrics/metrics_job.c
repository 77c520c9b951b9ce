/* A job for the metrics test (prometheus_scrape_test.sh): every rank makes CALLS allreduces of COUNT float32s, says
   so by creating DIR/ready.<rank> (holding its pid), and stays alive, its communicator intact, until the test opens
   DIR/release (a FIFO) for writing, or for at most WAIT_SECONDS. With "lose" the test kills a rank meanwhile: the
   others make one more allreduce, which must fail, write what it returned in DIR/failed.<rank>, abort their
   communicator as an application does after a failure, and stay alive until the test opens DIR/end.
   Usage: metrics_job DIR CALLS COUNT WAIT_SECONDS [lose]. */
#include <chorus/chorus.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Opened before the rank says ready, without blocking: the test's writer cannot come and go unseen. */
static int openFifo(const char* dir, const char* name) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fprintf(stderr, "metrics_job: open %s: %s\n", path, strerror(errno));
  return fd;
}

/* Linux: a FIFO's read end polls readable (or hung up) only once a writer has opened it. */
static int waitFifo(int fd, int rank, int waitSeconds) {
  struct pollfd p = {fd, POLLIN, 0};
  int n;
  do {
    n = poll(&p, 1, waitSeconds * 1000);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) fprintf(stderr, "metrics_job: rank %d: not released within %d s\n", rank, waitSeconds);
  close(fd);
  return n > 0;
}

static int writeFile(const char* dir, const char* name, int rank, const char* text) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s.%d", dir, name, rank);
  FILE* f = fopen(path, "w");
  if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
    fprintf(stderr, "metrics_job: rank %d: writing %s: %s\n", rank, path, strerror(errno));
    return 0;
  }
  return 1;
}

static int fail(const char* what, chorusResult_t r, chorusComm_t comm) {
  fprintf(stderr, "metrics_job: %s: %s: %s\n", what, chorusGetErrorString(r), chorusGetLastError(comm));
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 5 && !(argc == 6 && strcmp(argv[5], "lose") == 0)) {
    fprintf(stderr, "usage: metrics_job DIR CALLS COUNT WAIT_SECONDS [lose]\n");
    return 2;
  }
  const char* dir = argv[1];
  const int calls = atoi(argv[2]);
  const size_t count = (size_t)atol(argv[3]);
  const int waitSeconds = atoi(argv[4]);
  const int lose = argc == 6;
  const int release = openFifo(dir, "release");
  const int end = lose ? openFifo(dir, "end") : -1;
  if (release < 0 || (lose && end < 0)) return 1;
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
  char text[4096];
  snprintf(text, sizeof(text), "%ld\n", (long)getpid());
  if (!writeFile(dir, "ready", rank, text)) return 1;
  const int released = waitFifo(release, rank, waitSeconds);
  if (!lose) {
    free(data);
    r = chorusCommDestroy(comm);
    if (r != chorusSuccess) return fail("destroy", r, NULL);
    return released ? 0 : 1;
  }
  /* A peer is gone: this call fails; what it returned goes to the test, which compares it with the counters. */
  r = chorusAllReduce(data, data, count, chorusFloat32, chorusSum, comm, NULL);
  if (r == chorusSuccess) {
    fprintf(stderr, "metrics_job: rank %d: the allreduce after a rank was killed succeeded\n", rank);
    return 1;
  }
  snprintf(text, sizeof(text), "%s: %s\n", chorusGetErrorString(r), chorusGetLastError(comm));
  if (chorusCommAbort(comm) != chorusSuccess || !writeFile(dir, "failed", rank, text)) return 1;
  free(data);
  return waitFifo(end, rank, waitSeconds) ? 0 : 1;
}
