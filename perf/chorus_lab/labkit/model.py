"""The cost model's view of a lab: the topology file the ranks load (this machine's host, with the lab's link as
the network class), the cluster file chorus-topo --predict reads, and its predictions for a sweep."""

import copy
import json
import os
import subprocess
import tempfile
import types

from . import jobs, plan
from .spec import Host, LabError


def pair_of(spec):
    """Two of the lab's hosts, one rank each."""
    pair = copy.copy(spec)
    pair.hosts = [Host(h.name, 1, h.rack) for h in spec.hosts[:2]]
    return pair


def cores_per_host(spec):
    """Each emulated host's share of this machine's cores, as the ranks are bound (plan.rank_cpus): whole cores where
    there are enough, a fraction where the hosts outnumber them (4 hosts on 2 cores: half a core each)."""
    cpus, hosts = os.cpu_count() or 1, len(spec.hosts)
    return cpus // hosts if cpus >= hosts else round(cpus / hosts, 3)


def crowding(spec):
    """How many times a host's ranks outnumber its cores (1: not at all)."""
    return max(1.0, max(h.ranks for h in spec.hosts) / cores_per_host(spec))


def split_scheduler_wait(spec, crowded_alpha, pair_alpha):
    """(latency, context switch) for the model where a host's ranks outnumber its cores: the link's own latency is the
    pair's per-message time, and what every rank's ring took more per message is the scheduler's wait, per
    oversubscription of the cores (the model's context_switch_us: its dependent steps pay it, calls streamed back to
    back do not). At 2 hosts x 2 on one core each (session 26): 26 us per message over all ranks, 14 over the pair."""
    over = crowding(spec) - 1
    if over <= 0 or pair_alpha is None or crowded_alpha is None:
        return crowded_alpha, None
    return pair_alpha, round(max(0.0, crowded_alpha - pair_alpha) / over, 2)


def per_message_us(lab, perf, bind, world):
    """One run: an 8-byte ring allreduce over `world`'s ranks, 1000 calls (2(p-1) messages each, back to back), its
    time per call divided by its messages; software, kernel and scheduler included. None when it fails."""
    with tempfile.TemporaryFile("w+") as out:
        saved = os.environ.get("CHORUS_ALGO")
        os.environ["CHORUS_ALGO"] = "ring"
        try:
            code = jobs.run_ranks(world, lab.tag, [perf, "allreduce", "-b", "8", "-e", "8", "-n", "1000", "-w", "50"],
                                  60, types.SimpleNamespace(signal=None), rank0_out=out, bind=bind)
        finally:
            if saved is None:
                del os.environ["CHORUS_ALGO"]
            else:
                os.environ["CHORUS_ALGO"] = saved
        out.seek(0)
        rows = [line.split() for line in out if line.split() and line.split()[0] == "8"]
    return float(rows[0][5]) / (2 * (world.nranks - 1)) if code == 0 and rows else None


def median(values):
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None


def measure_alpha(lab, perf, bind=True):
    """Chorus's own per-message time between two of the lab's hosts (per_message_us, one rank on each), which is what
    the model's latency stands for. None when chorus-perf is missing or fails.
    The median of five runs of 1000 calls: one disturbed run (seen: 251 us) must not set it, nor one lucky one; with
    four ranks on two cores, three runs of 200 calls gave 37-66 us from one lab to the next (session 20)."""
    if len(lab.spec.hosts) < 2 or not os.path.exists(perf):
        return None
    return median(per_message_us(lab, perf, bind, pair_of(lab.spec)) for _ in range(5))


def measure_crowded(lab, perf, bind=True):
    """Where a host's ranks outnumber its cores: (the pair's per-message time, every rank's), each the median of five
    runs, the two taken in turn so that a slow spell of the machine falls on both (split_scheduler_wait divides
    them). Measured one after the other, the pair's came out at 16-22 us and the scheduler's wait at 7-16 from one
    sweep to the next (session 26)."""
    if len(lab.spec.hosts) < 2 or not os.path.exists(perf):
        return None, None
    pair, crowded = [], []
    for _ in range(5):
        pair.append(per_message_us(lab, perf, bind, pair_of(lab.spec)))
        crowded.append(per_message_us(lab, perf, bind, lab.spec))
    return median(pair), median(crowded)


# tbf counts whole frames: a full 1500-byte-MTU TCP segment carries 1448 bytes of payload in 1514 on the link
# (Ethernet, IP and TCP headers with timestamps), so the bytes a collective moves go at 95.6% of the rate.
TCP_PAYLOAD_SHARE = 1448 / 1514


def network_link(lab):
    """The network class's figures: one NIC's rate (Chorus sends a peer pair's bytes over one interface until it
    stripes them, issue 18), its latency (the lab file's, else Chorus's measured per-message time, else the socket
    round trip's), and tbf's token bucket: its burst passes at what the unshaped veth carries (measured when the lab
    comes up; without that figure the model prices the rate alone)."""
    latency = lab.model_latency_us()
    link = {"latency_us": round(latency if latency is not None else 25.0, 2),
            "bandwidth_gbs": round(lab.spec.rate_bps / 8e9 * TCP_PAYLOAD_SHARE, 6)}
    if lab.capacity and lab.capacity / 1e9 > link["bandwidth_gbs"]:
        link["burst_bytes"] = plan.tbf_burst(lab.spec.rate_bps)
        link["peak_gbs"] = round(lab.capacity / 1e9, 6)
    return link


def fabric(lab):
    """The racks as the cost model sees them (hosts in contiguous blocks of hosts_per_rack sharing an uplink), or
    None for one switch, or for racks that are not such blocks (the model could not describe them)."""
    spec = lab.spec
    if spec.racks == 1:
        return None
    per = max(len(spec.hosts_in_rack(k)) for k in range(spec.racks))
    if any(h.rack != i // per for i, h in enumerate(spec.hosts)):
        return None
    return {"hosts_per_rack": per, "uplink_gbs": round(spec.uplink_bps / 8e9 * TCP_PAYLOAD_SHARE, 6)}


def write_topology_file(lab, chorus_topo, path):
    """This host's topology (chorus-topo --json) with the lab's network link and racks, for CHORUS_TOPO_FILE."""
    done = subprocess.run([chorus_topo, "--json"], capture_output=True, text=True)
    if done.returncode != 0:
        raise LabError(f"{chorus_topo} --json: {done.stderr.strip() or 'exit ' + str(done.returncode)}")
    topo = json.loads(done.stdout)
    topo.setdefault("links", {})["network"] = network_link(lab)
    if lab.context_switch_us is not None:
        topo["scheduler"] = {"context_switch_us": lab.context_switch_us}
    racks = fabric(lab)
    if racks:
        topo["fabric"] = racks
    with open(path, "w") as f:
        json.dump(topo, f, indent=1)
    return topo


def cluster_of(lab, topo):
    """The chorus-topo --predict cluster file of this lab: its ranks, each host's share of this machine's cores, its
    link, the scheduler's wait where it measured one, and its fabric."""
    spec = lab.spec
    intra = topo.get("links", {}).get("same_numa")
    cluster = {"format": "chorus-cluster/1", "ranks_per_host": max(h.ranks for h in spec.hosts),
               "cores_per_host": cores_per_host(spec), "nics_per_host": spec.nics,
               "nic": network_link(lab)}
    if intra:
        cluster["intra_host"] = intra
    if lab.context_switch_us is not None:
        cluster["context_switch_us"] = lab.context_switch_us
    racks = fabric(lab)
    if racks:
        cluster["fabric"] = racks
    return cluster


def predictions(chorus_topo, cluster_path, nranks, collective, sizes):
    """{(bytes, algorithm): predicted us} from chorus-topo --predict at exactly this world size."""
    done = subprocess.run([chorus_topo, "--predict", cluster_path, "--ranks", str(nranks), "--collective",
                           collective, "--sizes", ",".join(str(s) for s in sizes), "--json"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise LabError(f"chorus-topo --predict: {done.stderr.strip() or 'exit ' + str(done.returncode)}")
    out = {}
    for row in json.loads(done.stdout)["predictions"]:
        for algo, us in row["algorithms"].items():
            out[(row["bytes"], algo)] = us
        out[(row["bytes"], "default")] = row["algorithms"].get(row["selected"])
    return out


def algorithms(chorus_topo, cluster_path, nranks, collective):
    """Every algorithm of `collective` the cost model prices in this world (chorus-lab sweep's default --algos)."""
    priced = predictions(chorus_topo, cluster_path, nranks, collective, [1 << 20])
    return [algo for (_, algo), us in priced.items() if algo != "default" and us is not None]
