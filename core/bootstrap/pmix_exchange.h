// PMIx as a bootstrap channel: under a PMIx launcher (Open MPI's mpirun, srun --mpi=pmix, prterun) rank 0 hands
// the other ranks what they need to find it (the store's address) through the launcher's own key-value exchange.
// libpmix is loaded at run time, so Chorus builds and runs where it is absent.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace chorus {

// True when a PMIx server started this process: PMIX_RANK and PMIX_NAMESPACE are set, and a PMIX_SERVER_URI*
// variable says where the server listens.
bool pmixLaunched();

// This process's place in its PMIx job.
struct PmixJob {
  int rank = -1;
  int size = 0;
  std::string nspace;
};

using PmixValues = std::map<std::string, std::string>;

// Every rank of the job calls this once. Rank 0's `publish` (called on rank 0 only) gives the values; rank 0 puts
// them (global scope) and commits, every rank fences with data collection (bounded by timeoutSeconds where the
// server honours PMIX_TIMEOUT), and the others get `keys` from rank 0. Returns the values on every rank.
// PMIx stays initialized until the process exits: Open MPI cannot PMIx_Init again after a full PMIx_Finalize, so
// finalizing early would break a later MPI_Init, and a process that exits without finalizing is reported by mpirun
// as having terminated abnormally. PMIx_Init is reference counted, so MPI_Init/MPI_Finalize around it are unharmed.
// Throws chorusSystemError naming the libraries looked for when libpmix cannot be loaded, and chorusSystemError
// with PMIx's own error text (PMIx_Error_string) when a PMIx call fails.
PmixValues shareFromRankZero(const std::vector<std::string>& keys,
                             const std::function<PmixValues(const PmixJob&)>& publish, double timeoutSeconds,
                             PmixJob* job);

}  // namespace chorus
