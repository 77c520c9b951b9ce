/* Plain C11 use of the installed header and library: a world of one, allreduce in place. */
#include <chorus/chorus.h>
#include <stdio.h>

int main(void) {
  chorusUniqueId id;
  chorusComm_t comm;
  float data[4] = {1, 2, 3, 4};
  int version = 0;
  if (chorusGetVersion(&version) != chorusSuccess || version != CHORUS_VERSION_CODE) return 1;
  if (chorusGetUniqueId(&id) != chorusSuccess) return 2;
  if (chorusCommInitRank(&comm, 1, id, 0) != chorusSuccess) return 3;
  {
    /* A second communicator of this process with settings of its own. */
    chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
    chorusComm_t named;
    chorusUniqueId other;
    config.timeoutSeconds = 10;
    config.commName = "consumer";
    if (chorusGetUniqueId(&other) != chorusSuccess) return 7;
    if (chorusCommInitRankConfig(&named, 1, other, 0, &config) != chorusSuccess) return 8;
    chorusCommDestroy(named);
  }
  if (chorusAllReduce(data, data, 4, chorusFloat32, chorusSum, comm, NULL) != chorusSuccess) return 4;
  if (data[3] != 4.0f) return 5;
  if (chorusAllReduce(data, data, 4, (chorusDataType_t)99, chorusSum, comm, NULL) != chorusInvalidArgument) return 6;
  chorusCommDestroy(comm);
  printf("consumer_c ok (version %d)\n", version);
  return 0;
}
