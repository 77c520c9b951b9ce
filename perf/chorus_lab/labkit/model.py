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
    back do not). At 2 hosts x 2 on one core each: 26 us per message over all ranks, 14 over the pair."""
    over = crowding(spec) - 1
    if over <= 0 or pair_alpha is None or crowded_alpha is None:
        return crowded_alpha, None
    return pair_alpha, round(max(0.0, crowded_alpha - pair_alpha) / over, 2)


def collective_times(lab, perf, bind, world, collective, algorithm, sizes, calls, warmup):
    """One run of chorus-perf `collective` over `world`'s ranks with CHORUS_ALGO=algorithm, at each of `sizes` (two at
    most: -b and -i) one after the other: {bytes: time per call in us}, or None when it fails."""
    lo, hi = min(sizes), max(sizes)
    step = ["-i", str(hi - lo)] if hi > lo else []
    with tempfile.TemporaryFile("w+") as out:
        saved = os.environ.get("CHORUS_ALGO")
        os.environ["CHORUS_ALGO"] = algorithm
        try:
            code = jobs.run_ranks(world, lab.tag, [perf, collective, "-b", str(lo), "-e", str(hi), *step,
                                                   "-n", str(calls), "-w", str(warmup)],
                                  60, types.SimpleNamespace(signal=None), rank0_out=out, bind=bind)
        finally:
            if saved is None:
                del os.environ["CHORUS_ALGO"]
            else:
                os.environ["CHORUS_ALGO"] = saved
        out.seek(0)
        rows = {int(f[0]): float(f[5]) for f in (line.split() for line in out) if f and f[0].isdigit()}
    return rows if code == 0 and all(n in rows for n in sizes) else None


def per_message_us(lab, perf, bind, world):
    """One run: an 8-byte ring allreduce over `world`'s ranks, 1000 calls (2(p-1) messages each, back to back), its
    time per call divided by its messages; software, kernel and scheduler included. None when it fails."""
    rows = collective_times(lab, perf, bind, world, "allreduce", "ring", [8], 1000, 50)
    return rows[8] / (2 * (world.nranks - 1)) if rows else None


def chain_us(lab, perf, bind, pair):
    """One run: an 8-byte broadcast between the two ranks of `pair`, 1000 calls back to back, its time per call: one
    message one way, the calls streaming (the root goes on once its message is sent). None when it fails."""
    rows = collective_times(lab, perf, bind, pair, "broadcast", "chain", [8], 1000, 50)
    return rows[8] if rows else None


def median(values):
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None


def measure_pair(lab, perf, bind=True, crowded=False):
    """Chorus's own figures between two of the lab's hosts, one rank on each: (its per-message time, which the model's
    latency stands for; the chain's time per call, LinkCost::chainUs; with `crowded`, every rank's per-message time
    too, for split_scheduler_wait), each the median of five runs taken in turn, so that a spell of the machine falls
    on all of them. (None, None, None) when chorus-perf is missing or the lab has one host.
    Five runs of 1000 calls: one disturbed run (seen: 251 us) must not set a figure, nor one lucky one (with four
    ranks on two cores, three runs of 200 calls gave 37-66 us from one lab to the next). The two figures
    move apart: in one day's checks the per-message time came out at 9.3-16.5 us from lab to lab, in two clusters
    (11-13 and 16), while 2-host chain reduces and broadcasts took 7.1-9.6 us in labs of either (docs/cost_model.md)."""
    if len(lab.spec.hosts) < 2 or not os.path.exists(perf):
        return None, None, None
    pair = pair_of(lab.spec)
    alphas, chains, everyone = [], [], []
    for _ in range(5):
        alphas.append(per_message_us(lab, perf, bind, pair))
        chains.append(chain_us(lab, perf, bind, pair))
        if crowded:
            everyone.append(per_message_us(lab, perf, bind, lab.spec))
    return median(alphas), median(chains), median(everyone) if crowded else None


def measure_link(lab, perf, bind=True):
    """The lab's measured figures for the model, set on `lab`: alpha_us, chain_us and, where a host's ranks outnumber
    its cores, context_switch_us (measure_pair, split_scheduler_wait). Returns every rank's per-message time where
    crowded (else None), for the report."""
    crowded = crowding(lab.spec) > 1
    pair, lab.chain_us, everyone = measure_pair(lab, perf, bind, crowded)
    lab.alpha_us = pair
    if crowded:
        lab.alpha_us, lab.context_switch_us = split_scheduler_wait(lab.spec, everyone, pair)
    return everyone


def mean_of(before, after):
    """Two measurements of one figure, before and after a sweep: their mean, or whichever exists."""
    if before is None or after is None:
        return after if before is None else before
    return round((before + after) / 2, 2)


def frame_payload(spec):
    """What one full TCP segment carries at the lab's MTU: the MTU less 40 bytes of IP and TCP headers and 12 of
    timestamps (1448 at 1500)."""
    return spec.mtu - 52


def payload_share(spec):
    """tbf counts whole frames: a full segment's payload over the frame on the link (Ethernet's 14-byte header
    added), so the bytes a collective moves go at this share of the rate (1448 / 1514 = 95.6% at a 1500-byte MTU)."""
    return frame_payload(spec) / (spec.mtu + 14)


def multi_frame_sizes(spec):
    """The messages measure_multi_frame compares: 48 bytes less than one frame's payload and 48 more (1400 and 1496
    at a 1500-byte MTU), in whole floats."""
    return (frame_payload(spec) - 48) // 4 * 4, (frame_payload(spec) + 51) // 4 * 4


def measure_multi_frame(lab, perf, bind=True):
    """What a message just longer than one frame costs between two of the lab's hosts over one just shorter: the
    model's multi_frame_us. Measured on the unshaped links (Lab.up's `unshaped` step), so that no rate bounds the
    calls: a 2-rank recursive-doubling allreduce, whose ranks exchange the whole buffer at once, of each size, 2000
    calls after 100 (past TCP's quick acknowledgements at a connection's start, which every message pays); the
    median of five runs' differences (1.0-4.2 us across one check's 15 labs; 3.5-5.4 by hand at 1 and 10 Gbit/s
    alike; a ping-pong shows no step, 0.1-0.9 us, nor did 15-call runs). None when it cannot be measured."""
    if len(lab.spec.hosts) < 2 or not os.path.exists(perf):
        return None
    shorter, longer = multi_frame_sizes(lab.spec)
    runs = (collective_times(lab, perf, bind, pair_of(lab.spec), "allreduce", "recursive_doubling", [shorter, longer],
                             2000, 100) for _ in range(5))
    step = median(rows[longer] - rows[shorter] for rows in runs if rows)
    return None if step is None else round(max(0.0, step), 2)


def network_link(lab):
    """The network class's figures: one NIC's rate (Chorus sends a peer pair's bytes over one interface until it
    stripes them over rails), its latency (the lab file's, else Chorus's measured per-message time, else the socket
    round trip's), and tbf's token bucket: its burst passes at what the unshaped veth carries (measured when the lab
    comes up; without that figure the model prices the rate alone)."""
    latency = lab.model_latency_us()
    link = {"latency_us": round(latency if latency is not None else 25.0, 2),
            "bandwidth_gbs": round(lab.spec.rate_bps / 8e9 * payload_share(lab.spec), 6)}
    if lab.capacity and lab.capacity / 1e9 > link["bandwidth_gbs"]:
        link["burst_bytes"] = plan.tbf_burst(lab.spec.rate_bps)
        link["peak_gbs"] = round(lab.capacity / 1e9, 6)
    if lab.multi_frame_us is not None:
        link["frame_bytes"] = frame_payload(lab.spec)
        link["multi_frame_us"] = lab.multi_frame_us
    if lab.chain_us is not None and lab.spec.latency_us is None:
        link["chain_us"] = round(lab.chain_us, 2)
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
    return {"hosts_per_rack": per, "uplink_gbs": round(spec.uplink_bps / 8e9 * payload_share(spec), 6)}


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


def predicted_rows(chorus_topo, cluster_path, nranks, collective, sizes):
    """chorus-topo --predict's rows at exactly this world size: per size, each algorithm's time and the selected one."""
    done = subprocess.run([chorus_topo, "--predict", cluster_path, "--ranks", str(nranks), "--collective",
                           collective, "--sizes", ",".join(str(s) for s in sizes), "--json"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise LabError(f"chorus-topo --predict: {done.stderr.strip() or 'exit ' + str(done.returncode)}")
    return json.loads(done.stdout)["predictions"]


def selections(chorus_topo, cluster_path, nranks, collective, sizes):
    """{bytes: the algorithm the selector picks}: with the cluster file the ranks' topology file matched, what the
    default selection ran."""
    return {row["bytes"]: row["selected"] for row in predicted_rows(chorus_topo, cluster_path, nranks, collective,
                                                                     sizes)}


def predictions(chorus_topo, cluster_path, nranks, collective, sizes):
    """{(bytes, algorithm): predicted us} from chorus-topo --predict at exactly this world size."""
    out = {}
    for row in predicted_rows(chorus_topo, cluster_path, nranks, collective, sizes):
        for algo, us in row["algorithms"].items():
            out[(row["bytes"], algo)] = us
        out[(row["bytes"], "default")] = row["algorithms"].get(row["selected"])
    return out


def algorithms(chorus_topo, cluster_path, nranks, collective):
    """Every algorithm of `collective` the cost model prices in this world (chorus-lab sweep's default --algos)."""
    priced = predictions(chorus_topo, cluster_path, nranks, collective, [1 << 20])
    return [algo for (_, algo), us in priced.items() if algo != "default" and us is not None]
