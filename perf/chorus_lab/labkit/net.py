"""Building and removing labs: runs the plan's commands, measures what the machine can carry between two hosts
(before shaping) and the shaped link's latency, keeps a state directory per lab (/run/chorus-lab/<tag>: the spec,
the measurements, the cost model's topology file), and removes what killed labs left behind."""

import json
import os
import re
import shutil
import subprocess
import sys

from . import plan
from .spec import DEFAULT_MTU, LabError

STATE_ROOT = "/run/chorus-lab"
CAPACITY_PORT = 29412
LATENCY_PORT = 29413


def sh(argv, check=True):
    done = subprocess.run(list(argv), capture_output=True, text=True)
    if check and done.returncode != 0:
        why = done.stderr.strip() or done.stdout.strip() or f"exit {done.returncode}"
        raise LabError(f"{' '.join(argv)}: {why}")
    return done.stdout


def require_root():
    if os.geteuid() != 0:
        raise LabError("needs root (CAP_NET_ADMIN) to make network namespaces, veth pairs, bridges and tc qdiscs")


def lab_namespaces():
    out = sh(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in out.splitlines() if line.startswith(plan.PREFIX)]


def state_dir(tag):
    return os.path.join(STATE_ROOT, tag)


def clean_stale(everything=False):
    """Removes the namespaces and state of labs whose process is gone (labs made by `run`), of named labs whose state
    is gone, and, with everything, of every lab. Returns how many namespaces it removed."""
    removed = 0
    for ns in lab_namespaces():
        tag = ns.rsplit("-", 1)[0]
        m = re.fullmatch(rf"{plan.PREFIX}(\d+)", tag)
        alive = os.path.exists(f"/proc/{m.group(1)}") if m else os.path.exists(state_dir(tag))
        if everything or not alive:
            sh(["ip", "netns", "del", ns], check=False)
            removed += 1
    if os.path.isdir(STATE_ROOT):
        for tag in os.listdir(STATE_ROOT):
            m = re.fullmatch(rf"{plan.PREFIX}(\d+)", tag)
            if everything or (m and not os.path.exists(f"/proc/{m.group(1)}")):
                shutil.rmtree(state_dir(tag), ignore_errors=True)
    return removed


def netem_available():
    """Whether this kernel can add a netem qdisc (tried in a scratch namespace), and its error text if not."""
    probe = f"{plan.PREFIX}{os.getpid()}-probe"
    sh(["ip", "netns", "add", probe])
    try:
        got = subprocess.run(["ip", "netns", "exec", probe, "tc", "qdisc", "add", "dev", "lo", "root", "netem",
                              "delay", "1ms"], capture_output=True, text=True)
    finally:
        sh(["ip", "netns", "del", probe], check=False)
    return got.returncode == 0, got.stderr.strip()


def check_netem(spec):
    """netem's arguments, after checking the kernel has it: delay or loss it cannot emulate is refused in one line,
    never silently dropped."""
    args = plan.netem_request(spec)
    if args:
        ok, why = netem_available()
        if not ok:
            raise LabError("this kernel has no netem qdisc (sch_netem), so delay, jitter and loss cannot be emulated "
                           f"here ({why}); rate alone works (tbf)")
    return args


def ipv6_available():
    """Whether this kernel has IPv6 (not built without it, not booted with ipv6.disable=1), and why not."""
    if not os.path.isdir("/proc/sys/net/ipv6"):
        return False, "no /proc/sys/net/ipv6: the kernel has no IPv6 (built without it, or booted ipv6.disable=1)"
    return True, ""


def check_addresses(spec):
    if spec.addresses != "ipv4":
        ok, why = ipv6_available()
        if not ok:
            raise LabError(f"IPv6 hosts asked for ({spec.addresses}), but {why}")


def _server(ns, host, port, body):
    family = "socket.AF_INET6" if ":" in host else "socket.AF_INET"
    return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", f"""
import socket
s = socket.socket({family}); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(socket.getaddrinfo("{host}", {port}, {family})[0][4])
s.listen(1); print("ready", flush=True); c, _ = s.accept()
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
{body}
"""], stdout=subprocess.PIPE, text=True)


def probe_capacity(tag, seconds=1.0, host0=None):
    """Bytes per second one TCP stream moves from host 1 to host 0 before any shaping: what this machine's CPUs let
    the lab carry. A shaped rate close to it means results may be CPU-bound, not link-bound."""
    # Into one buffer: a fresh 1 MiB object per recv made the probe measure page faults, not the link (0.4-0.5 GB/s
    # against Chorus's 2.5 GB/s between the same hosts: perf/results/cost_model_lab.md, "How far one check is
    # from the next").
    host0 = host0 or plan.address(0)
    server = _server(plan.host_ns(tag, 0), host0, CAPACITY_PORT, """n = 0
buf = bytearray(1 << 20)
while True:
    got = c.recv_into(buf)
    if not got: break
    n += got
print(n, flush=True)""")
    try:
        if server.stdout.readline().strip() != "ready":
            return None
        client = subprocess.run(["ip", "netns", "exec", plan.host_ns(tag, 1), sys.executable, "-c", f"""
import socket, time
c = socket.create_connection(("{host0}", {CAPACITY_PORT})); buf = bytes(1 << 20)
start = time.monotonic(); end = start + {seconds}
while time.monotonic() < end: c.sendall(buf)
c.close(); print(time.monotonic() - start)
"""], capture_output=True, text=True, timeout=30)
        elapsed = float(client.stdout.strip())
        return int(server.stdout.readline().strip()) / elapsed
    except (ValueError, subprocess.TimeoutExpired):
        return None
    finally:
        server.kill()
        server.wait()


def probe_latency(tag, rounds=400, host0=None):
    """Half the median round trip of 8 bytes between hosts 1 and 0 over the shaped link, in microseconds (Python's
    own overhead included: a bound from above on what the link adds)."""
    host0 = host0 or plan.address(0)
    server = _server(plan.host_ns(tag, 0), host0, LATENCY_PORT, """while True:
    b = c.recv(8)
    if not b: break
    c.sendall(b)""")
    try:
        if server.stdout.readline().strip() != "ready":
            return None
        client = subprocess.run(["ip", "netns", "exec", plan.host_ns(tag, 1), sys.executable, "-c", f"""
import socket, time
c = socket.create_connection(("{host0}", {LATENCY_PORT}))
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
t = []
for i in range({rounds}):
    s = time.perf_counter(); c.sendall(b"12345678"); c.recv(8); t.append(time.perf_counter() - s)
c.close(); t.sort(); print(t[len(t) // 2] / 2 * 1e6)
"""], capture_output=True, text=True, timeout=60)
        return float(client.stdout.strip())
    except (ValueError, subprocess.TimeoutExpired):
        return None
    finally:
        server.kill()
        server.wait()


class Lab:
    """One lab on this machine. `tag` names everything it makes; `keep` labs (chorus-lab up) outlive the process."""

    def __init__(self, spec, tag):
        self.spec = spec
        self.tag = tag
        self.capacity = None    # bytes/s, one unshaped stream between two hosts
        self.latency_us = None  # measured over the shaped link (socket round trip / 2)
        self.alpha_us = None    # Chorus's per-message time over it (model.measure_pair)
        self.context_switch_us = None  # the scheduler's wait per step where a host's ranks outnumber its cores
        self.multi_frame_us = None  # what a message of more than one frame costs more (model.measure_multi_frame)
        self.chain_us = None    # a chain's time per call back to back, one message one way (model.measure_pair)
        self.figures_before_after = None  # {figure: [before, after]} of a sweep (cli.remeasure)
        self.made = []

    def up(self, netem_args=(), log=sys.stderr, unshaped=None):
        """Builds the lab; `unshaped(self)`, when given, runs between the capacity probe and the shaping."""
        check_addresses(self.spec)
        os.makedirs(state_dir(self.tag), exist_ok=True)
        try:
            for argv in plan.bring_up(self.spec, self.tag):
                if argv[:3] == ["ip", "netns", "add"]:
                    self.made.append(argv[3])
                sh(argv)
            if len(self.spec.hosts) > 1:
                self.capacity = probe_capacity(self.tag, host0=plan.address(0, 0, self.spec.addresses))
            if unshaped:
                unshaped(self)
            for argv in plan.shaping(self.spec, self.tag, netem_args):
                sh(argv)
            if len(self.spec.hosts) > 1:
                self.latency_us = probe_latency(self.tag, host0=plan.address(0, 0, self.spec.addresses))
        except BaseException:
            self.down()
            raise
        if self.capacity is not None and log:
            note = (f" (all {len(self.spec.hosts)} hosts sending at once come within 80% of it: results may be "
                    "CPU-bound, not link-bound)") if self.cpu_limited() else ""
            lat = f", {self.latency_us:.0f} us one way over the shaped link" if self.latency_us else ""
            print(f"chorus-lab: this machine moves {self.capacity * 8 / 1e9:.2f} Gbit/s between two unshaped hosts; "
                  f"links shaped to {self.spec.rate_bps / 1e9:.2f} Gbit/s{lat}{note}", file=log)
        self.save()

    def cpu_limited(self):
        """Whether every host sending at its links' rate at once (as an allreduce does) asks this machine for more
        than 80% of what it moved in one unshaped stream: then the CPU, not the shaping, may set the pace."""
        offered = len(self.spec.hosts) * self.spec.nics * self.spec.rate_bps / 8
        return self.capacity is not None and offered > 0.8 * self.capacity

    def model_latency_us(self):
        for figure in (self.spec.latency_us, self.alpha_us, self.latency_us):
            if figure is not None:
                return figure
        return None

    def save(self):
        with open(os.path.join(state_dir(self.tag), "lab.json"), "w") as f:
            json.dump({"tag": self.tag, "pid": os.getpid(), "spec": spec_to_dict(self.spec),
                       "capacity_bps": self.capacity and self.capacity * 8, "latency_us": self.latency_us,
                       "alpha_us": self.alpha_us, "context_switch_us": self.context_switch_us,
                       "multi_frame_us": self.multi_frame_us, "chain_us": self.chain_us}, f,
                      indent=1)

    def restore(self, state):
        """The measured figures back from `state` (what save wrote, as load_state reads it)."""
        self.capacity = state["capacity_bps"] and state["capacity_bps"] / 8
        self.latency_us = state["latency_us"]
        self.alpha_us = state.get("alpha_us")
        self.context_switch_us = state.get("context_switch_us")
        self.multi_frame_us = state.get("multi_frame_us")
        self.chain_us = state.get("chain_us")

    def down(self):
        for ns in reversed(self.made or plan.namespaces_of(self.spec, self.tag)):
            sh(["ip", "netns", "del", ns], check=False)
        self.made = []
        shutil.rmtree(state_dir(self.tag), ignore_errors=True)


def spec_to_dict(spec):
    """The lab file that describes `spec` (parse_lab reads it back)."""
    link = {"rate": spec.rate_text}
    for key in ("latency_us", "delay", "jitter", "loss"):
        if getattr(spec, key) not in (None, ""):
            link[key] = getattr(spec, key)
    if spec.mtu != DEFAULT_MTU:
        link["mtu"] = spec.mtu
    fabric = {"kind": "switch"}
    if spec.racks > 1:
        fabric = {"kind": "racks", "racks": spec.racks, "uplink_rate": f"{int(spec.uplink_bps)}bit"}
    doc = {"format": "chorus-lab/1", "name": spec.name, "nics_per_host": spec.nics,
           "hosts": [{"name": h.name, "ranks": h.ranks, "rack": h.rack} for h in spec.hosts], "link": link,
           "fabric": fabric}
    if spec.addresses != "ipv4":
        doc["addresses"] = spec.addresses
    return doc


def load_state(tag):
    """The saved record of a lab that is up (chorus-lab up), or None."""
    try:
        with open(os.path.join(state_dir(tag), "lab.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def named_labs():
    if not os.path.isdir(STATE_ROOT):
        return []
    return sorted(t for t in os.listdir(STATE_ROOT) if t.startswith(plan.PREFIX + "-") and load_state(t))


def qdiscs_in(ns):
    """{device: [qdisc kinds]} in namespace ns."""
    out = {}
    for line in sh(["ip", "netns", "exec", ns, "tc", "qdisc", "show"], check=False).splitlines():
        m = re.match(r"qdisc (\S+) \S+ dev (\S+)", line)
        if m and m.group(1) not in ("noqueue",):
            out.setdefault(m.group(2), []).append(m.group(1))
    return out
