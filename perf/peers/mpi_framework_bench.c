/* mpi_framework_bench.c -- Open MPI's side of chorus-perf's framework calls, measured the way
 * ../shared/peers/mpi_bench.c measures allreduce (and perf/peers/mpi_gather_bench.c allgather), same CSV:
 *
 *   alltoall   MPI_Alltoall; bytes = each rank's send total (nccl-tests' size), busbw = algbw * (n-1)/n
 *   alltoallv  MPI_Alltoallv with chorus-perf's split (alltoallvCount in perf/chorus_perf/collective_layout.h:
 *              each pair between half and one and a half times the nominal block); bytes nominal, as chorus-perf
 *   gather     MPI_Gather to rank 0; bytes = the gathered total, busbw factor (n-1)/n
 *   scatter    MPI_Scatter from rank 0; bytes = the scattered total, busbw factor (n-1)/n
 *   sendrecv   MPI_Sendrecv around the ring (to rank+1, from rank-1); bytes per rank, busbw = algbw
 *   pingpong   ranks 2k and 2k+1: MPI_Send then MPI_Recv (and back); time = half the round trip, busbw = algbw
 *   barrier    MPI_Barrier; bytes 0
 *
 *   float32, out of place; one verification run per size, warm-up, then a timed loop after a barrier;
 *   time_us = max over ranks.
 *
 * Usage: mpirun -np N mpi_framework_bench [--csv FILE] [--config NAME] [--colls alltoall,...] [--sizes 8,...]
 *                                          [--target-ms 300]
 * Rank 0 writes CSV: lib,config,ranks,coll,algo,bytes,time_us,algbw_GBps,busbw_GBps.
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64

enum { ALLTOALL, ALLTOALLV, GATHER, SCATTER, SENDRECV, PINGPONG, BARRIER, NCOLLS };
static const char* const kNames[NCOLLS] = {"alltoall", "alltoallv", "gather", "scatter", "sendrecv", "pingpong",
                                           "barrier"};

static double allmax(double v) {
  double r;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return r;
}

/* chorus-perf's alltoallvCount, bit for bit. */
static size_t alltoallv_count(size_t count, int from, int to, uint64_t salt) {
  uint64_t h = ((uint64_t)from << 40) ^ ((uint64_t)to << 20) ^ salt;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return count / 2 + (count == 0 ? 0 : (size_t)(h % (count + 1)));
}

struct Call {
  int coll, rank, n;
  size_t count; /* elements per block (alltoall, gather, scatter) or per message (sendrecv, pingpong) */
  float *in, *out;
  int *scounts, *sdispls, *rcounts, *rdispls;
};

static void run_once(const struct Call* c) {
  const int next = (c->rank + 1) % c->n, prev = (c->rank + c->n - 1) % c->n;
  const int count = (int)c->count;
  switch (c->coll) {
    case ALLTOALL: MPI_Alltoall(c->in, count, MPI_FLOAT, c->out, count, MPI_FLOAT, MPI_COMM_WORLD); break;
    case ALLTOALLV:
      MPI_Alltoallv(c->in, c->scounts, c->sdispls, MPI_FLOAT, c->out, c->rcounts, c->rdispls, MPI_FLOAT,
                    MPI_COMM_WORLD);
      break;
    case GATHER: MPI_Gather(c->in, count, MPI_FLOAT, c->out, count, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
    case SCATTER: MPI_Scatter(c->in, count, MPI_FLOAT, c->out, count, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
    case SENDRECV:
      MPI_Sendrecv(c->in, count, MPI_FLOAT, next, 7, c->out, count, MPI_FLOAT, prev, 7, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      break;
    case PINGPONG: {
      const int partner = c->rank ^ 1;
      if (partner >= c->n) break;
      if (c->rank % 2 == 0) {
        MPI_Send(c->in, count, MPI_FLOAT, partner, 9, MPI_COMM_WORLD);
        MPI_Recv(c->out, count, MPI_FLOAT, partner, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(c->out, count, MPI_FLOAT, partner, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(c->in, count, MPI_FLOAT, partner, 9, MPI_COMM_WORLD);
      }
      break;
    }
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
  }
}

/* The value rank r holds at element i of its send buffer, and a check of one received element. */
static float value_of(int r, size_t i) { return (float)(r * 1000 + (int)(i % 997)); }

static int verify(const struct Call* c) {
  const int n = c->n, r = c->rank;
  size_t bad = 0;
  switch (c->coll) {
    case ALLTOALL:
      for (int p = 0; p < n; p++)
        for (size_t i = 0; i < c->count; i++) bad += c->out[p * c->count + i] != value_of(p, r * c->count + i);
      break;
    case ALLTOALLV:
      for (int p = 0; p < n; p++) {
        size_t from = 0;
        for (int q = 0; q < r; q++) from += alltoallv_count(c->count, p, q, 1);
        for (int i = 0; i < c->rcounts[p]; i++) bad += c->out[c->rdispls[p] + i] != value_of(p, from + (size_t)i);
      }
      break;
    case GATHER:
      if (r == 0)
        for (int p = 0; p < n; p++)
          for (size_t i = 0; i < c->count; i++) bad += c->out[p * c->count + i] != value_of(p, i);
      break;
    case SCATTER:
      for (size_t i = 0; i < c->count; i++) bad += c->out[i] != value_of(0, r * c->count + i);
      break;
    case SENDRECV:
      for (size_t i = 0; i < c->count; i++) bad += c->out[i] != value_of((r + n - 1) % n, i);
      break;
    case PINGPONG:
      if ((r ^ 1) < n)
        for (size_t i = 0; i < c->count; i++) bad += c->out[i] != value_of(r ^ 1, i);
      break;
  }
  if (bad) fprintf(stderr, "rank %d: VERIFY MISMATCH %s count=%zu: %zu wrong\n", r, kNames[c->coll], c->count, bad);
  return bad != 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const char* csv_path = NULL;
  const char* config = "default";
  const char* colls = "alltoall,alltoallv,gather,scatter,sendrecv,pingpong,barrier";
  double target_ms = 300.0;
  size_t sizes[MAX_SIZES];
  int nsizes = 0;
  for (size_t b = 8; b <= ((size_t)64 << 20); b *= 8) sizes[nsizes++] = b;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
    else if (!strcmp(argv[i], "--config") && i + 1 < argc) config = argv[++i];
    else if (!strcmp(argv[i], "--colls") && i + 1 < argc) colls = argv[++i];
    else if (!strcmp(argv[i], "--target-ms") && i + 1 < argc) target_ms = atof(argv[++i]);
    else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      char* s = strdup(argv[++i]);
      nsizes = 0;
      for (char* t = strtok(s, ","); t && nsizes < MAX_SIZES; t = strtok(NULL, ",")) sizes[nsizes++] = strtoull(t, NULL, 10);
      free(s);
    } else {
      if (rank == 0) fprintf(stderr, "unknown/incomplete argument %s\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  FILE* csv = NULL;
  if (rank == 0 && csv_path) {
    csv = fopen(csv_path, "w");
    if (!csv) {
      perror("fopen csv");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fprintf(csv, "lib,config,ranks,coll,algo,bytes,time_us,algbw_GBps,busbw_GBps\n");
  }
  const int n = nranks;
  int* vectors = malloc(4 * (size_t)n * sizeof(int));
  int failed = 0;
  for (int coll = 0; coll < NCOLLS; coll++) {
    /* Whole words only: "gather" must not pick "allgather", nor "alltoall" "alltoallv". */
    char want[64];
    snprintf(want, sizeof want, ",%s,", kNames[coll]);
    char have[512];
    snprintf(have, sizeof have, ",%s,", colls);
    if (!strstr(have, want)) continue;
    for (int si = 0; si < (coll == BARRIER ? 1 : nsizes); si++) {
      const size_t bytes = coll == BARRIER ? 0 : sizes[si];
      struct Call c = {coll, rank, n, 0, NULL, NULL, vectors, vectors + n, vectors + 2 * n, vectors + 3 * n};
      size_t in_elems = 0, out_elems = 0, moved = 0;
      switch (coll) {
        case ALLTOALL:
        case ALLTOALLV:
        case GATHER:
        case SCATTER:
          c.count = bytes / sizeof(float) / (size_t)n;
          moved = c.count * (size_t)n * sizeof(float);
          in_elems = out_elems = c.count * (size_t)n * (coll == ALLTOALLV ? 2 : 1);
          break;
        case SENDRECV:
        case PINGPONG:
          c.count = bytes / sizeof(float);
          moved = c.count * sizeof(float);
          in_elems = out_elems = c.count;
          break;
      }
      if (coll != BARRIER && c.count == 0) continue;
      if (coll == ALLTOALLV) {
        int sent = 0, received = 0;
        for (int p = 0; p < n; p++) {
          c.scounts[p] = (int)alltoallv_count(c.count, rank, p, 1);
          c.sdispls[p] = sent;
          sent += c.scounts[p];
          c.rcounts[p] = (int)alltoallv_count(c.count, p, rank, 1);
          c.rdispls[p] = received;
          received += c.rcounts[p];
        }
      }
      c.in = malloc((in_elems + 1) * sizeof(float));
      c.out = malloc((out_elems + 1) * sizeof(float));
      if (!c.in || !c.out) MPI_Abort(MPI_COMM_WORLD, 1);
      for (size_t i = 0; i < in_elems; i++) c.in[i] = value_of(rank, i);
      memset(c.out, 0, (out_elems + 1) * sizeof(float));
      run_once(&c);
      failed |= verify(&c);
      int warm = moved * 4 < (1u << 20) ? 10 : 2;
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < warm; i++) run_once(&c);
      double t_est = allmax((MPI_Wtime() - t0) / warm);
      long iters = (long)ceil(target_ms * 1e-3 / (t_est > 1e-9 ? t_est : 1e-9));
      if (iters < 5) iters = 5;
      if (iters > 100000) iters = 100000;
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
      for (long i = 0; i < iters; i++) run_once(&c);
      double t = allmax((MPI_Wtime() - t0) / iters);
      if (coll == PINGPONG) t /= 2; /* one way */
      if (rank == 0) {
        const double algbw = t > 0 ? moved / t / 1e9 : 0;
        const double factor = (coll == SENDRECV || coll == PINGPONG) ? 1.0 : coll == BARRIER ? 0.0 : (n - 1.0) / n;
        char line[256];
        snprintf(line, sizeof line, "mpi,%s,%d,%s,tuned,%zu,%.3f,%.4f,%.4f", config, nranks, kNames[coll],
                 coll == BARRIER ? (size_t)0 : moved, t * 1e6, algbw, algbw * factor);
        printf("%s  iters=%ld\n", line, iters);
        if (csv) fprintf(csv, "%s\n", line);
      }
      free(c.in);
      free(c.out);
    }
  }
  free(vectors);
  if (csv) fclose(csv);
  MPI_Finalize();
  return failed ? 3 : 0;
}
