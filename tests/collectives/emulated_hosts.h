// CHORUS_TEST_HOSTS=H[/rr] for process-world workers: this rank plays a part of one of H emulated hosts (contiguous
// blocks as chorusrun --hosts makes them, or round-robin with /rr so that hosts are not rank ranges), by setting
// CHORUS_HOST_ID before it joins.
#pragma once

namespace chorus::test {

void emulateHosts(int rank, int nranks);

}  // namespace chorus::test
