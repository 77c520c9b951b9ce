/* Chorus: collective communication for host and CUDA device buffers. C ABI, shaped after NCCL. */
#ifndef CHORUS_CHORUS_H_
#define CHORUS_CHORUS_H_

#include <stddef.h>

#if defined(_WIN32)
#define CHORUS_API
#else
#define CHORUS_API __attribute__((visibility("default")))
#endif

#define CHORUS_MAJOR 0
#define CHORUS_MINOR 1
#define CHORUS_PATCH 0
/* chorusGetVersion returns MAJOR * 10000 + MINOR * 100 + PATCH. */
#define CHORUS_VERSION_CODE (CHORUS_MAJOR * 10000 + CHORUS_MINOR * 100 + CHORUS_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  chorusSuccess = 0,
  chorusUnhandledCudaError,
  chorusSystemError,
  chorusInternalError,
  chorusInvalidArgument,
  chorusInvalidUsage,
  chorusRemoteError,
  chorusInProgress,
  chorusTimeout,
  chorusNumResults
} chorusResult_t;

typedef enum {
  chorusInt8 = 0,
  chorusUint8,
  chorusInt32,
  chorusUint32,
  chorusInt64,
  chorusUint64,
  chorusFloat16,
  chorusBfloat16,
  chorusFloat32,
  chorusFloat64,
  /* fp8 (OCP 8-bit floating point, NCCL's ncclFloat8e4m3/ncclFloat8e5m2). Reductions decode to float, reduce in
     float and round once to nearest even, saturating as NCCL's satfinite conversion does: a result beyond the
     largest finite value, infinities included, becomes that value with its sign (e4m3 +-448, e5m2 +-57344), so a
     reduction never yields e5m2 infinity; NaN stays NaN (e4m3's only NaN is S.1111.111). */
  chorusFloat8e4m3,
  chorusFloat8e5m2,
  chorusNumTypes
} chorusDataType_t;

/* chorusBand, chorusBor and chorusBxor (bitwise and, or, xor) are for the integer types only. */
typedef enum {
  chorusSum = 0,
  chorusProd,
  chorusMax,
  chorusMin,
  chorusAvg,
  chorusBand,
  chorusBor,
  chorusBxor,
  chorusNumOps
} chorusRedOp_t;

typedef struct chorusComm* chorusComm_t;
/* Marks the end of the calls before it on a host stream (chorusEventRecord), to wait for or ask about. */
typedef struct chorusEvent* chorusEvent_t;
/* A cudaStream_t for device buffers: the call enqueues on it and returns (NULL: the legacy default stream).
   For host buffers: NULL (the call blocks until done) or a host stream (chorusHostStreamCreate: the call is queued
   and returns at once). */
typedef void* chorusStream_t;
/* Opaque rendezvous token: store address, job id. Produced by chorusGetUniqueId on one rank, copied to all. */
typedef struct {
  char internal[128];
} chorusUniqueId;

/* Per-communicator settings, shaped after NCCL's ncclConfig_t. Start from CHORUS_CONFIG_INITIALIZER (every field
   "unset"), set the fields you care about, and pass it to an init call; an unset field takes its environment
   variable's value (or that variable's default), so two communicators of one process can differ in every field.
   A field with a bad value fails the init with chorusInvalidArgument naming the field. The strings are copied. */
typedef struct {
  size_t size;            /* filled by CHORUS_CONFIG_INITIALIZER: sizeof(chorusConfig_t) of the caller's header */
  unsigned int magic;     /* CHORUS_CONFIG_MAGIC */
  unsigned int version;   /* CHORUS_VERSION_CODE of the caller's header */
  double timeoutSeconds;  /* CHORUS_TIMEOUT: seconds any blocking wait may last, 0 = forever */
  const char* algo;       /* CHORUS_ALGO syntax: "ring", "allreduce:0-64K=recursive_doubling,64K-inf=ring", ... */
  const char* transports; /* CHORUS_TRANSPORT syntax: comma list restricting the transports, e.g. "tcp" */
  size_t chunkSize;       /* CHORUS_CHUNK_SIZE: bytes per pipelined slice (4K..64M) */
  int socketsPerPeer;     /* CHORUS_NSOCKS: TCP sockets per peer pair (1..16) */
  int checkMismatch;      /* CHORUS_CHECK_MISMATCH: 1 lists ranks that called different collectives; 0 off */
  const char* commName;   /* shown in every log line and error message of this communicator (no env variable) */
  size_t shmBufferBytes;  /* CHORUS_SHM_BUFFER: shared ring bytes per direction of a shared-memory pair (64K..64M) */
  int shmCma;             /* CHORUS_SHM_CMA: 0, 1 or 2 (single-copy large shared-memory messages) */
  int topoProbe;          /* CHORUS_TOPO_PROBE: 1 measures each link class at init */
  const char* socketIfname; /* CHORUS_SOCKET_IFNAME: interfaces for TCP, NCCL syntax */
  size_t fusionThreshold;   /* CHORUS_FUSION_THRESHOLD: bytes per fused buffer of a group's allreduces (0: off) */
  int splitShare;           /* CHORUS_SPLIT_SHARE: 1 split children share the parent's connections; 0 connect anew */
  const char* traceDir;     /* CHORUS_TRACE: directory for this communicator's Chrome trace ("" off) */
  int traceLevel;           /* CHORUS_TRACE_LEVEL: 0 one event per call, 1 also one per transfer step */
  int ibEmulation;          /* CHORUS_IB_EMULATION: 1 the ib transport uses the software verbs device */
  const char* ibHca;        /* CHORUS_IB_HCA: RDMA devices and ports, NCCL_IB_HCA's syntax */
  int ibGidIndex;           /* CHORUS_IB_GID_INDEX: RoCE GID index, -1 chosen */
  int ibTimeout;            /* CHORUS_IB_TIMEOUT: ACK timeout exponent (1..31) */
  int ibRetryCnt;           /* CHORUS_IB_RETRY_CNT: transport retry count (0..7) */
  int ibDisable;            /* CHORUS_IB_DISABLE: 1 never use ib */
  int ibQpsPerPeer;         /* CHORUS_IB_QPS_PER_PEER: queue pairs per peer pair (1..16) */
  const char* compression;  /* CHORUS_COMPRESSION: "none", "bf16", "fp16" (network links), "bf16:all", "fp16:all" */
  int autotune;             /* CHORUS_AUTOTUNE: 1 tries the algorithms and slice sizes the model ranks close, per
                               collective, element width and size, on the calls themselves, and keeps the fastest */
  const char* autotuneFile; /* CHORUS_AUTOTUNE_FILE: tuned table read at init and written at destroy (CHORUS_ALGO
                               syntax; "" none) */
  int deviceCalls;          /* CHORUS_DEVICE_CALLS: 0 auto, 1 stream (the caller's stream waits for the result), 2
                               blocking (the caller's thread waits; the stream is never held) */
  int encrypt;              /* CHORUS_ENCRYPT: 1 every TCP link carries AES-128-GCM records keyed from the secret */
  size_t deviceChunkSize;   /* CHORUS_DEVICE_CHUNK_SIZE: bytes per pipelined slice of device-buffer calls (4K..64M) */
  int flightRecords;        /* CHORUS_FLIGHT_RECORDS: calls the flight recorder keeps (0 off, at most 1048576) */
  const char* flightDir;    /* CHORUS_FLIGHT_DIR: directory for flight-record dumps ("" none) */
  const char* socketFamily; /* CHORUS_SOCKET_FAMILY: "AF_INET", "AF_INET6" or "" (either) for TCP's interfaces */
  int metricsPort;          /* CHORUS_METRICS_PORT: Prometheus metrics on this port + the local rank (0 off) */
} chorusConfig_t;

#define CHORUS_CONFIG_MAGIC 0x43484346u /* "CHCF" */
/* "Unset" for each kind of field. */
#define CHORUS_CONFIG_UNDEF_INT (-2147483647 - 1)
#define CHORUS_CONFIG_UNDEF_SIZE ((size_t)-1)
#define CHORUS_CONFIG_UNDEF_DOUBLE (-1.0e300)
#define CHORUS_CONFIG_UNDEF_PTR NULL
#define CHORUS_CONFIG_INITIALIZER                                                                            \
  {                                                                                                          \
    sizeof(chorusConfig_t), CHORUS_CONFIG_MAGIC, CHORUS_VERSION_CODE, CHORUS_CONFIG_UNDEF_DOUBLE,            \
        CHORUS_CONFIG_UNDEF_PTR, CHORUS_CONFIG_UNDEF_PTR, CHORUS_CONFIG_UNDEF_SIZE, CHORUS_CONFIG_UNDEF_INT, \
        CHORUS_CONFIG_UNDEF_INT, CHORUS_CONFIG_UNDEF_PTR, CHORUS_CONFIG_UNDEF_SIZE, CHORUS_CONFIG_UNDEF_INT, \
        CHORUS_CONFIG_UNDEF_INT, CHORUS_CONFIG_UNDEF_PTR, CHORUS_CONFIG_UNDEF_SIZE, CHORUS_CONFIG_UNDEF_INT, \
        CHORUS_CONFIG_UNDEF_PTR, CHORUS_CONFIG_UNDEF_INT, CHORUS_CONFIG_UNDEF_INT, CHORUS_CONFIG_UNDEF_PTR,  \
        CHORUS_CONFIG_UNDEF_INT, CHORUS_CONFIG_UNDEF_INT, CHORUS_CONFIG_UNDEF_INT, CHORUS_CONFIG_UNDEF_INT,  \
        CHORUS_CONFIG_UNDEF_INT, CHORUS_CONFIG_UNDEF_PTR, CHORUS_CONFIG_UNDEF_INT, CHORUS_CONFIG_UNDEF_PTR,  \
        CHORUS_CONFIG_UNDEF_INT, CHORUS_CONFIG_UNDEF_INT, CHORUS_CONFIG_UNDEF_SIZE, CHORUS_CONFIG_UNDEF_INT, \
        CHORUS_CONFIG_UNDEF_PTR, CHORUS_CONFIG_UNDEF_PTR, CHORUS_CONFIG_UNDEF_INT                            \
  }

/* Writes the library version (MAJOR*10000 + MINOR*100 + PATCH). */
CHORUS_API chorusResult_t chorusGetVersion(int* version);
/* Starts a rendezvous store in this process and describes it (address, job id) in *uniqueId. */
CHORUS_API chorusResult_t chorusGetUniqueId(chorusUniqueId* uniqueId);
/* Joins rank `rank` of `nranks` to the job named by commId; blocks until every rank has joined or CHORUS_TIMEOUT. */
CHORUS_API chorusResult_t chorusCommInitRank(chorusComm_t* comm, int nranks, chorusUniqueId commId, int rank);
/* As chorusCommInitRank, with rank, size and store read from CHORUS_*, torchrun, Open MPI or Slurm variables. */
CHORUS_API chorusResult_t chorusCommInitFromEnv(chorusComm_t* comm);
/* As chorusCommInitRank and chorusCommInitFromEnv, with per-communicator settings (NULL: all from the
   environment). */
CHORUS_API chorusResult_t chorusCommInitRankConfig(chorusComm_t* comm, int nranks, chorusUniqueId commId, int rank,
                                                   chorusConfig_t* config);
CHORUS_API chorusResult_t chorusCommInitFromEnvConfig(chorusComm_t* comm, chorusConfig_t* config);
/* Waits for nothing: closes every connection and frees the communicator. NULL is accepted. */
CHORUS_API chorusResult_t chorusCommDestroy(chorusComm_t comm);
/* Makes any call blocked on comm return (chorusRemoteError) and frees the communicator. Safe from another thread. */
CHORUS_API chorusResult_t chorusCommAbort(chorusComm_t comm);
/* Registers [buff, buff+size) of host memory for comm's calls until chorusCommDeregister (NCCL's
   ncclCommRegister): transports that can send registered memory without copying it (ib on an adapter without
   on-demand paging) keep a memory region for it; elsewhere the handle costs nothing. Deregister before freeing the
   memory. No call may run on comm (or a communicator sharing its connections) meanwhile. */
CHORUS_API chorusResult_t chorusCommRegister(const chorusComm_t comm, void* buff, size_t size, void** handle);
CHORUS_API chorusResult_t chorusCommDeregister(const chorusComm_t comm, void* handle);
/* Writes the number of ranks in comm. */
CHORUS_API chorusResult_t chorusCommCount(const chorusComm_t comm, int* count);
/* Writes this process's rank in comm. */
CHORUS_API chorusResult_t chorusCommUserRank(const chorusComm_t comm, int* rank);
/* Writes the first error comm has met (a lost peer, an abort), or chorusSuccess. */
CHORUS_API chorusResult_t chorusCommGetAsyncError(chorusComm_t comm, chorusResult_t* asyncError);
/* The flight recorder (docs/hangs.md): comm's last calls on this rank (number, collective, bytes, algorithm, state,
   what a waiting call waits for, times) as JSON. Safe from any thread while calls run; never waits for them.
   chorusCommDumpFlightRecord writes them to `path` (NULL: this rank's file in CHORUS_FLIGHT_DIR, config flightDir;
   chorusInvalidArgument when there is none) through a temporary file and a rename. */
CHORUS_API chorusResult_t chorusCommDumpFlightRecord(chorusComm_t comm, const char* path);
/* The same into `buffer`: its newest `newest` calls (0: every one kept), NUL-terminated. *size is the buffer's bytes
   on entry and the bytes the record needs (with the NUL) on return; a NULL buffer asks for the size only, and a
   buffer too small is left alone and fails with chorusInvalidArgument (the record may grow between two calls). */
CHORUS_API chorusResult_t chorusCommFlightRecord(chorusComm_t comm, int newest, char* buffer, size_t* size);
/* A static, human-readable name for a result code. */
CHORUS_API const char* chorusGetErrorString(chorusResult_t result);
/* The last error message on comm, or this thread's last error when comm is NULL; "" when none. */
CHORUS_API const char* chorusGetLastError(chorusComm_t comm);

/* Every rank gets the element-wise reduction of all ranks' sendbuff. In place when sendbuff == recvbuff. */
CHORUS_API chorusResult_t chorusAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                          chorusDataType_t datatype, chorusRedOp_t op, chorusComm_t comm,
                                          chorusStream_t stream);
/* Every rank's recvbuff gets root's sendbuff (sendbuff is read on root only). */
CHORUS_API chorusResult_t chorusBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                          chorusDataType_t datatype, int root, chorusComm_t comm,
                                          chorusStream_t stream);
/* Root's recvbuff gets the element-wise reduction of all ranks' sendbuff (recvbuff is written on root only). */
CHORUS_API chorusResult_t chorusReduce(const void* sendbuff, void* recvbuff, size_t count,
                                       chorusDataType_t datatype, chorusRedOp_t op, int root, chorusComm_t comm,
                                       chorusStream_t stream);
/* recvbuff (nranks * sendcount elements) gets every rank's sendbuff, in rank order. */
CHORUS_API chorusResult_t chorusAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                          chorusDataType_t datatype, chorusComm_t comm, chorusStream_t stream);
/* Rank r's recvbuff gets block r (recvcount elements) of the element-wise reduction of all sendbuffs. */
CHORUS_API chorusResult_t chorusReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                              chorusDataType_t datatype, chorusRedOp_t op, chorusComm_t comm,
                                              chorusStream_t stream);

/* Point-to-point, as NCCL's: a rank's sends to a peer meet that peer's receives from it in call order, with equal
   datatype and count (count 0 included). Outside a group each call blocks (host buffers) until its transfer is
   done; inside a group a rank may also send to and receive from itself. */
CHORUS_API chorusResult_t chorusSend(const void* sendbuff, size_t count, chorusDataType_t datatype, int peer,
                                     chorusComm_t comm, chorusStream_t stream);
CHORUS_API chorusResult_t chorusRecv(void* recvbuff, size_t count, chorusDataType_t datatype, int peer,
                                     chorusComm_t comm, chorusStream_t stream);
/* A receive from whichever rank's next message comes first (MPI_ANY_SOURCE, Gloo's recv from any source; NCCL has
   none): it takes that rank's next send to this rank, in that pair's order as chorusRecv would, and writes its rank
   to *source when the call completes (with a stream: once the stream has run it). Host buffers only, never inside
   a group (which sender comes first decides the call). */
CHORUS_API chorusResult_t chorusRecvAny(void* recvbuff, size_t count, chorusDataType_t datatype, int* source,
                                        chorusComm_t comm, chorusStream_t stream);
/* Groups, as NCCL's: calls between chorusGroupStart and chorusGroupEnd (which nest) are only recorded, and the
   outermost chorusGroupEnd runs them together, so that any pattern of sends and receives in them completes (a ring,
   every pair of an alltoall). Groups may span communicators. A call that fails its argument checks inside a group
   returns its error and makes chorusGroupEnd drop the group (chorusInvalidUsage); chorusGroupEnd without a
   chorusGroupStart is chorusInvalidUsage. */
CHORUS_API chorusResult_t chorusGroupStart(void);
CHORUS_API chorusResult_t chorusGroupEnd(void);
/* Block j (count elements) of rank i's sendbuff lands as block i of rank j's recvbuff. Out of place only. */
CHORUS_API chorusResult_t chorusAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                                         chorusDataType_t datatype, chorusComm_t comm, chorusStream_t stream);
/* As MPI_Alltoallv: sendcounts[j] elements from sendbuff + sdispls[j] go to rank j, which receives them into
   recvbuff + rdispls[i] (displacements in elements; zeros allowed). Rank i's sendcounts[j] must equal rank j's
   recvcounts[i]: a pair that disagrees fails on both ranks. The arrays are copied before the call returns. */
CHORUS_API chorusResult_t chorusAllToAllv(const void* sendbuff, const size_t sendcounts[], const size_t sdispls[],
                                          void* recvbuff, const size_t recvcounts[], const size_t rdispls[],
                                          chorusDataType_t datatype, chorusComm_t comm, chorusStream_t stream);
/* Root's recvbuff (nranks * count elements) gets every rank's sendbuff in rank order; recvbuff is used on the root
   only. In place on the root when sendbuff == recvbuff + root * count elements. */
CHORUS_API chorusResult_t chorusGather(const void* sendbuff, void* recvbuff, size_t count, chorusDataType_t datatype,
                                       int root, chorusComm_t comm, chorusStream_t stream);
/* Rank r's recvbuff gets block r (count elements) of root's sendbuff; sendbuff is used on the root only. In place
   on the root when recvbuff == sendbuff + root * count elements. */
CHORUS_API chorusResult_t chorusScatter(const void* sendbuff, void* recvbuff, size_t count,
                                        chorusDataType_t datatype, int root, chorusComm_t comm,
                                        chorusStream_t stream);
/* Returns once every rank of comm has entered it. */
CHORUS_API chorusResult_t chorusBarrier(chorusComm_t comm, chorusStream_t stream);
/* As MPI_Comm_split and ncclCommSplit: collective over comm; the ranks that pass one color form a new communicator,
   ranked by key, then by rank in comm. CHORUS_SPLIT_NOCOLOR: this rank joins none (*newcomm = NULL). config NULL:
   the parent's settings; a config's unset fields also take the parent's. The child meets its peers through the
   parent's rendezvous; children can be split again, and parent and child may be destroyed in either order. */
#define CHORUS_SPLIT_NOCOLOR -1
CHORUS_API chorusResult_t chorusCommSplit(chorusComm_t comm, int color, int key, chorusComm_t* newcomm,
                                          chorusConfig_t* config);

/* Elastic jobs (Horovod's elastic mode; NCCL 2.27's ncclCommShrink and 2.29's ncclCommGrow; ULFM's MPIX_Comm_shrink).
   Shrink: called by every rank of comm that goes on (excluded or lost ranks do not call); the new communicator holds
   them in their old order. excludeRanks lists the ranks to leave out (every caller passes the same list). With
   excludeRanks NULL (and CHORUS_SHRINK_ABORT) the callers leave out the ranks whose processes are gone, agreeing
   among themselves on that set: a rank that calls after the others agreed without it is told so
   (chorusRemoteError). CHORUS_SHRINK_DEFAULT: comm is healthy, its pending calls finish first, and the new
   communicator shares its connections (as a split child does); CHORUS_SHRINK_ABORT: comm may have failed, its
   pending calls are aborted first and the survivors connect anew. Returns within milliseconds of the last survivor's
   call once the lost processes are gone (their store connections closed). config NULL: comm's settings. Destroy comm
   afterwards as usual. The agreement runs through the store, which must outlive the lost ranks: chorusrun's does;
   a store served by rank 0 (CHORUS_STORE without chorusrun, or chorusGetUniqueId's) is lost with rank 0. */
#define CHORUS_SHRINK_DEFAULT 0
#define CHORUS_SHRINK_ABORT 1
CHORUS_API chorusResult_t chorusCommShrink(chorusComm_t comm, const int* excludeRanks, int excludeCount,
                                           chorusComm_t* newcomm, chorusConfig_t* config, int flags);
/* Grow: the ranks of comm and newRanks new processes make one communicator of size(comm) + newRanks, the ranks of
   comm first in their order. Rank 0 of comm makes an id with chorusCommGetUniqueId and hands it to the new
   processes (however it likes); every rank of comm calls chorusCommGrow(comm, newRanks, id, -1, &newcomm, config)
   (only rank 0's id is read; the others may pass NULL) and each new process calls
   chorusCommGrow(NULL, newRanks, &id, rank, &newcomm, config) with rank in [size(comm), size(comm) + newRanks).
   comm stays usable; config NULL: comm's settings (a new process: the environment's). */
CHORUS_API chorusResult_t chorusCommGetUniqueId(chorusComm_t comm, chorusUniqueId* uniqueId);
CHORUS_API chorusResult_t chorusCommGrow(chorusComm_t comm, int newRanks, const chorusUniqueId* uniqueId, int rank,
                                         chorusComm_t* newcomm, chorusConfig_t* config);

/* Non-blocking host calls. A host stream orders the calls made with it and runs them in the background; calls on
   several streams of one communicator run in the order they were made (one at a time). Device buffers with a host
   stream, or a destroyed host stream, are chorusInvalidArgument. A failed call fails the stream's later calls; its
   error is returned by chorusStreamSynchronize, chorusStreamQuery and the event calls, with chorusGetLastError(NULL)
   saying what happened. Timeouts and chorusCommAbort apply as for blocking calls. */
CHORUS_API chorusResult_t chorusHostStreamCreate(chorusStream_t* stream);
/* Waits for what is queued on the stream, then frees it; returns the stream's first error, if any. */
CHORUS_API chorusResult_t chorusHostStreamDestroy(chorusStream_t stream);
/* Waits for every call queued on the stream; returns the first error of its calls. */
CHORUS_API chorusResult_t chorusStreamSynchronize(chorusStream_t stream);
/* chorusSuccess when every call queued on the stream has finished, chorusInProgress before, or the first error. */
CHORUS_API chorusResult_t chorusStreamQuery(chorusStream_t stream);
CHORUS_API chorusResult_t chorusEventCreate(chorusEvent_t* event);
/* Marks the calls queued on the stream so far (NULL stream: nothing to wait for). */
CHORUS_API chorusResult_t chorusEventRecord(chorusEvent_t event, chorusStream_t stream);
/* chorusSuccess once everything before the event ran, chorusInProgress before, or the first error among them. */
CHORUS_API chorusResult_t chorusEventQuery(chorusEvent_t event);
CHORUS_API chorusResult_t chorusEventSynchronize(chorusEvent_t event);
CHORUS_API chorusResult_t chorusEventDestroy(chorusEvent_t event);

/* Windows: one-sided put and signal, shaped after NCCL 2.29's ncclCommWindowRegister, ncclPutSignal, ncclSignal and
   ncclWaitSignal. Host memory with NULL or a host stream, inside groups too; or device memory with a CUDA stream
   (device windows, last item). See docs/windows.md for how each transport moves them.
   Semantics:
   - chorusCommWindowRegister is collective: every rank registers its own buffer (sizes may differ, 0 allowed) and
     gets a handle naming the whole window; ranks register and deregister their windows in the same order, outside
     groups. Deregistration returns once every put made to this rank's part before the peers deregistered has
     landed, and no peer may put into the window afterwards.
   - chorusPutSignal writes count elements from localbuff into peer's window at byte offset peerWinOffset, then raises
     signal sigIdx (in context ctx) at the peer: the peer sees the bytes before it sees the signal. A put beyond the
     peer's registered size is chorusInvalidArgument naming rank, peer and the peer's window size.
   - Puts and signals from one rank to one peer are delivered in the order they were made; a signal is raised only
     after every put made before it to that peer is visible there. (Between processes of one host, a put into a
     window registered in chorusMemAlloc memory is stored by the sender straight into the peer's window; the
     order holds there too: docs/windows.md.)
   - Signals are counted per (sender, sigIdx, ctx) at the receiver. chorusWaitSignal returns once, for each desc,
     opCnt signals from desc.peer on (sigIdx, ctx) have arrived, and consumes them (the count drops by opCnt).
   - Progress: puts travel on connections of their own, apart from the two-sided calls', and the target lands them
     (writes the bytes, counts the signal) whenever its communicator progresses: inside chorusWaitSignal, inside
     its own puts, and during the progress rounds of any other call on the communicator that waits on its
     connections. A rank that makes no call on the communicator lands nothing that travels as a message; its
     window's memory may change only while it is inside a call, or at any time where the sender stores directly
     (shared memory between threads of one process, windows in chorusMemAlloc memory between processes of one
     host, or with CHORUS_SHM_CMA=2) or the adapter writes it (ib: RDMA writes; docs/windows.md). Over shared
     memory a signal with sigIdx < 64 and ctx < 4, made when no earlier put or signal to that peer still waits in
     the ring, is a counter the sender raises in memory shared with the target: it is counted without the target's
     progress. Other signals count when the target progresses.
   - A put is complete locally when the call returns (NULL stream) or the host stream has run it: localbuff may be
     reused. It returns once the transport has taken its bytes, which may need the target to progress; puts between
     ranks that are both putting land each other's meanwhile. Over ib a put returns once its RDMA writes completed
     (the bytes are in the target's window), except puts of at most 64 bytes and bare signals, which return once
     the adapter has copied them. chorusWindowFlush returns once every put and signal this rank made on the
     communicator (win's and the others', NULL stream or run by a host stream) is complete at its target where the
     adapter writes them (ib); on the other paths puts are complete locally already and it returns at once.
   - Inside a group a rank's puts and signals on a communicator run at chorusGroupEnd first, then its other calls,
     then its waits.
   - Device windows: a window registered with device memory on every rank (a rank with nothing to expose passes
     any device pointer and size 0) moves by CUDA IPC, so every rank must share rank 0's machine; otherwise, or
     with host memory on some rank, registration is chorusInvalidUsage naming the rank. Its puts are CUDA stream
     calls, as NCCL's: NULL or a host stream is chorusInvalidUsage. On a CUDA stream every call only enqueues
     (returns at once): a put copies localbuff into the peer's window after the stream's earlier work, then raises
     the signal; chorusSignal raises one; chorusWaitSignal holds the stream until the counts are reached and
     consumes them. Signals on a CUDA stream are counted apart from those with NULL or a host stream, and are
     waited for on a CUDA stream; sigIdx < 16 and ctx < 4 there. The order and counting above hold in stream
     order: a signal is visible at the peer only after every put enqueued before it to that peer. Each signal
     writes its new count, so one rank's signals to one peer on one (sigIdx, ctx) must be in one stream order
     (one stream, or streams ordered by events). localbuff may be reused once the stream has run the put. Not
     inside groups (chorusInvalidUsage). Deregistration first waits for this rank's stream puts and signals to
     have run; a rank's counters live until its communicator is destroyed, by when peers' streams must have run
     their signals to it. */
typedef struct chorusWindow* chorusWindow_t;
#define CHORUS_WIN_DEFAULT 0
typedef struct {
  int opCnt;  /* signals to wait for (and consume) */
  int peer;   /* the rank that raises them */
  int sigIdx; /* signal index (>= 0) */
  int ctx;    /* context (>= 0), as NCCL's */
} chorusWaitSignalDesc_t;
CHORUS_API chorusResult_t chorusCommWindowRegister(chorusComm_t comm, void* buff, size_t size, chorusWindow_t* win,
                                                   int flags);
CHORUS_API chorusResult_t chorusCommWindowDeregister(chorusComm_t comm, chorusWindow_t win);
CHORUS_API chorusResult_t chorusPutSignal(const void* localbuff, size_t count, chorusDataType_t datatype, int peer,
                                          chorusWindow_t win, size_t peerWinOffset, int sigIdx, int ctx,
                                          unsigned int flags, chorusComm_t comm, chorusStream_t stream);
CHORUS_API chorusResult_t chorusSignal(int peer, int sigIdx, int ctx, unsigned int flags, chorusComm_t comm,
                                       chorusStream_t stream);
CHORUS_API chorusResult_t chorusWaitSignal(int nDesc, const chorusWaitSignalDesc_t* signalDescs, chorusComm_t comm,
                                           chorusStream_t stream);
CHORUS_API chorusResult_t chorusWindowFlush(chorusComm_t comm, chorusWindow_t win);
/* As NCCL's ncclMemAlloc / ncclMemFree: size bytes of host memory (zero, untouched until used) that the other
   processes of this host can map. A window registered inside such an allocation is mapped by the ranks of its host
   at registration, and their puts into it are a copy by the sender (no ring, no progress of the target); memory
   from elsewhere keeps the transport's path. It leaves no file in /dev/shm, however the processes end. Free it
   after deregistering the windows inside it. chorusMemFree(NULL) does nothing; a pointer chorusMemAlloc did not
   return is chorusInvalidArgument. */
CHORUS_API chorusResult_t chorusMemAlloc(void** ptr, size_t size);
CHORUS_API chorusResult_t chorusMemFree(void* ptr);

/* Extensions beyond NCCL's set. */
/* Size in bytes of one element of datatype, or 0 when out of range. */
CHORUS_API size_t chorusTypeSize(chorusDataType_t datatype);
/* A static lower-case name for datatype ("float32") or op ("sum"); "unknown" when out of range. */
CHORUS_API const char* chorusTypeName(chorusDataType_t datatype);
CHORUS_API const char* chorusOpName(chorusRedOp_t op);

#ifdef __cplusplus
}
#endif

#endif /* CHORUS_CHORUS_H_ */
