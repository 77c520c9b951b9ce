/* mpi_gather_bench.c -- MPI_Allgather and MPI_Reduce_scatter_block, measured the way
 * ../shared/peers/mpi_bench.c measures allreduce / bcast / reduce (that benchmark has no allgather or
 * reduce-scatter), so that chorus-perf's allgather and reducescatter sweeps have an Open MPI baseline.
 *
 *   - float32, MPI_SUM, out of place; bytes = the total (nccl-tests' size: recv size of allgather, send size of
 *     reduce-scatter), each rank contributing bytes / nranks;
 *   - one verification run per size, warm-up, then a timed loop after a barrier; time_us = max over ranks;
 *   - busbw = algbw * (n-1)/n, nccl-tests' factor for both.
 *
 * Usage: mpirun -np N mpi_gather_bench [--csv FILE] [--config NAME] [--colls allgather,reducescatter]
 *                                      [--sizes 8,1024,...] [--target-ms 300]
 * Rank 0 writes CSV: lib,config,ranks,coll,algo,bytes,time_us,algbw_GBps,busbw_GBps (mpi_bench's columns).
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64

static double allmax(double v) {
  double r;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return r;
}

static void run_once(int gather, const float* in, float* out, int per_rank) {
  if (gather) MPI_Allgather(in, per_rank, MPI_FLOAT, out, per_rank, MPI_FLOAT, MPI_COMM_WORLD);
  else MPI_Reduce_scatter_block(in, out, per_rank, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const char* csv_path = NULL;
  const char* config = "default";
  const char* colls = "allgather,reducescatter";
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
  int failed = 0;
  for (int gather = 1; gather >= 0; gather--) {
    const char* coll = gather ? "allgather" : "reducescatter";
    if (!strstr(colls, coll)) continue;
    for (int si = 0; si < nsizes; si++) {
      int per_rank = (int)(sizes[si] / sizeof(float) / nranks);
      if (per_rank == 0) continue;
      size_t total = (size_t)per_rank * nranks;
      float* in = malloc((gather ? per_rank : total) * sizeof(float));
      float* out = malloc((gather ? total : per_rank) * sizeof(float));
      if (!in || !out) MPI_Abort(MPI_COMM_WORLD, 1);
      for (size_t i = 0; i < (gather ? (size_t)per_rank : total); i++) in[i] = (float)(rank + 1);
      run_once(gather, in, out, per_rank);
      for (size_t i = 0; i < (gather ? total : (size_t)per_rank); i++) {
        float expect = gather ? (float)(i / per_rank + 1) : nranks * (nranks + 1) / 2.0f;
        if (out[i] != expect) {
          fprintf(stderr, "rank %d: VERIFY MISMATCH %s idx=%zu got=%g expect=%g\n", rank, coll, i, out[i], expect);
          failed = 1;
          break;
        }
      }
      int warm = total * 4 < (1u << 20) ? 10 : 2;
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < warm; i++) run_once(gather, in, out, per_rank);
      double t_est = allmax((MPI_Wtime() - t0) / warm);
      long iters = (long)ceil(target_ms * 1e-3 / (t_est > 1e-9 ? t_est : 1e-9));
      if (iters < 5) iters = 5;
      if (iters > 100000) iters = 100000;
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
      for (long i = 0; i < iters; i++) run_once(gather, in, out, per_rank);
      double t = allmax((MPI_Wtime() - t0) / iters);
      if (rank == 0) {
        size_t bytes = total * sizeof(float);
        double algbw = bytes / t / 1e9;
        char line[256];
        snprintf(line, sizeof line, "mpi,%s,%d,%s,tuned,%zu,%.3f,%.4f,%.4f", config, nranks, coll, bytes, t * 1e6,
                 algbw, algbw * (nranks - 1) / nranks);
        printf("%s  iters=%ld\n", line, iters);
        if (csv) fprintf(csv, "%s\n", line);
      }
      free(in);
      free(out);
    }
  }
  if (csv) fclose(csv);
  MPI_Finalize();
  return failed ? 3 : 0;
}
