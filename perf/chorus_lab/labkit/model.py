"""The cost model's view of a lab: the topology file the ranks load (this machine's host, with the lab's link as
the network class), the cluster file chorus-topo --predict reads, and its predictions for a sweep."""

import json
import os
import subprocess

from .spec import LabError


def network_link(lab):
    """The network class's figures: one NIC's rate (Chorus sends a peer pair's bytes over one interface until it
    stripes them, issue 18), and its latency (the lab file's, else measured)."""
    latency = lab.model_latency_us()
    return {"latency_us": round(latency if latency is not None else 25.0, 2), "bandwidth_gbs": lab.spec.rate_bps / 8e9}


def write_topology_file(lab, chorus_topo, path):
    """This host's topology (chorus-topo --json) with the lab's network link, for CHORUS_TOPO_FILE."""
    done = subprocess.run([chorus_topo, "--json"], capture_output=True, text=True)
    if done.returncode != 0:
        raise LabError(f"{chorus_topo} --json: {done.stderr.strip() or 'exit ' + str(done.returncode)}")
    topo = json.loads(done.stdout)
    topo.setdefault("links", {})["network"] = network_link(lab)
    with open(path, "w") as f:
        json.dump(topo, f, indent=1)
    return topo


def cluster_of(lab, topo):
    """The chorus-topo --predict cluster file of this lab: its ranks, this machine's cores, its link and fabric."""
    spec = lab.spec
    cores = sum(p.get("cores", 0) for p in topo.get("packages", [])) or os.cpu_count() or 1
    intra = topo.get("links", {}).get("same_numa")
    cluster = {"format": "chorus-cluster/1", "ranks_per_host": max(h.ranks for h in spec.hosts),
               "cores_per_host": cores, "nics_per_host": spec.nics,
               "nic": {"latency_us": network_link(lab)["latency_us"], "bandwidth_gbs": spec.rate_bps / 8e9}}
    if intra:
        cluster["intra_host"] = intra
    if spec.racks > 1:
        cluster["fabric"] = {"hosts_per_rack": max(len(spec.hosts_in_rack(k)) for k in range(spec.racks)),
                             "uplink_gbs": spec.uplink_bps / 8e9}
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
