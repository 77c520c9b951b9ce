"""chorus-lab's command line."""

import argparse
import json
import os
import sys

from . import jobs, model, net, plan, sweep
from .spec import DEFAULT_MTU, LabError, load_lab, make_spec

USAGE = """chorus-lab: emulated hosts on one machine, joined by shaped links, to run Chorus jobs across.

  chorus-lab up LAB                     bring up the lab a lab file describes, and leave it up
  chorus-lab down LAB|NAME              tear it down
  chorus-lab status [LAB|NAME]          the labs that are up: hosts, links, qdiscs, measurements
  chorus-lab run LAB -- CMD ARGS...     CMD once per rank in its host's namespace (the lab that is up under the
                                        file's name, else one brought up for this run and torn down after it)
  chorus-lab run --hosts N [--ranks-per-host K] [--rate 1gbit] [--ipv6] -- CMD ARGS...   the same without a file:
                                        one switch (--ipv6: IPv6-only hosts)
  chorus-lab sweep LAB|--hosts ... [--collective C] [--algos a,b] [-b -e -f -n] [--jobs N] --out DIR
                                        chorus-perf --algos in the lab, measured beside the cost model's prediction:
                                        DIR/sweep.csv, sweep.json, sweep.svg/.png
  chorus-lab clean [--all]              remove what killed labs left behind (every run does this first)

Each rank gets the environment Chorus reads (CHORUS_RANK, CHORUS_WORLD_SIZE, CHORUS_LOCAL_RANK, CHORUS_STORE on host
0, CHORUS_JOB_ID, CHORUS_SECRET, CHORUS_HOST_ID, CHORUS_SOCKET_IFNAME naming the lab's NICs) and CHORUS_TOPO_FILE: this
machine's topology with the lab's link as the network class, so the cost model prices the lab's links (unless
CHORUS_TOPO_FILE or CHORUS_TOPO_PROBE=1 is set). Lab file format: labkit/spec.py. Needs root (CAP_NET_ADMIN) and
the kernel's veth, bridge and tbf; netem for delay, jitter and loss (refused in one line where the kernel has none).
Everything is named chlab<pid>-... (runs) or chlab-<name>-... (labs that are up); nothing is made in the root
namespace."""


def spec_from(args):
    if getattr(args, "lab", None):
        if os.path.isfile(args.lab):
            spec = load_lab(args.lab)
            if args.ipv6 or args.addresses != "ipv4":  # the flags over the file's addresses
                spec.addresses = "ipv6" if args.ipv6 else args.addresses
            return spec
        raise LabError(f"{args.lab}: no such lab file")
    if not args.hosts:
        raise LabError("name a lab file or give --hosts")
    return make_spec("flags", args.hosts, args.ranks_per_host, 1, args.rate, delay=args.delay, jitter=args.jitter,
                     loss=args.loss, where="flags", mtu=args.mtu, addresses="ipv6" if args.ipv6 else args.addresses)


class Session:
    """A lab to run in: the named one that is up, or one made for this process and torn down at the end."""

    def __init__(self, spec, tools_dir, bind=True):
        self.spec = spec
        self.tools_dir = tools_dir
        self.bind = bind
        state = net.load_state(plan.named_tag(spec.name)) if spec.name != "flags" else None
        self.kept = state is not None
        self.lab = net.Lab(spec, plan.named_tag(spec.name) if self.kept else plan.ephemeral_tag(os.getpid()))
        if state:
            self.lab.restore(state)

    def topo_file(self):
        return os.path.join(net.state_dir(self.lab.tag), "topo.json")

    def __enter__(self):
        if not self.kept:
            bring_up(self.lab, self.tools_dir, self.bind)
        return self

    def __exit__(self, *exc):
        if not self.kept:
            self.lab.down()


def bring_up(lab, tools_dir, bind=True):
    netem_args = net.check_netem(lab.spec)
    perf = os.path.join(tools_dir, "chorus-perf")

    def measure_unshaped(lab):
        lab.multi_frame_us = model.measure_multi_frame(lab, perf, bind)

    lab.up(netem_args, unshaped=measure_unshaped if lab.spec.latency_us is None else None)
    topo = os.path.join(tools_dir, "chorus-topo")
    try:
        if lab.spec.latency_us is None:
            everyone = model.measure_link(lab, perf, bind)
            if lab.context_switch_us is not None:
                print(f"chorus-lab: with every rank, {everyone:.0f} us per message: the scheduler's wait is "
                      f"{lab.context_switch_us:.0f} us a step (the cost model's context switch)", file=sys.stderr)
            if lab.alpha_us:
                print(f"chorus-lab: Chorus moves a message between two hosts in {lab.alpha_us:.0f} us "
                      "(the cost model's latency)", file=sys.stderr)
            if lab.chain_us:
                print(f"chorus-lab: calls back to back pass a message one way every {lab.chain_us:.1f} us "
                      "(the cost model's chain)", file=sys.stderr)
            if lab.multi_frame_us is not None:
                print(f"chorus-lab: a message of more than one frame takes {lab.multi_frame_us:.0f} us more",
                      file=sys.stderr)
        lab.save()
        if os.path.exists(topo):
            model.write_topology_file(lab, topo, os.path.join(net.state_dir(lab.tag), "topo.json"))
    except BaseException:
        lab.down()
        raise


def cmd_up(args, tools_dir):
    spec = load_lab(args.lab)
    tag = plan.named_tag(spec.name)
    if net.load_state(tag):
        raise LabError(f"lab {spec.name} is already up (chorus-lab down {spec.name})")
    lab = net.Lab(spec, tag)
    bring_up(lab, tools_dir)
    print(f"chorus-lab: {spec.name} is up: {spec.describe()}")
    return 0


def tag_of(name_or_file):
    if os.path.isfile(name_or_file):
        return plan.named_tag(load_lab(name_or_file).name)
    return plan.named_tag(name_or_file)


def cmd_down(args):
    tag = tag_of(args.lab)
    state = net.load_state(tag)
    if not state:
        raise LabError(f"no lab {tag[len(plan.PREFIX) + 1:]} is up")
    from .spec import parse_lab
    net.Lab(parse_lab(json.dumps(state["spec"])), tag).down()
    print(f"chorus-lab: {state['spec']['name']} is down")
    return 0


def cmd_status(args):
    tags = [tag_of(args.lab)] if args.lab else net.named_labs()
    if not tags:
        print("chorus-lab: no lab is up")
        return 0
    from .spec import parse_lab
    code = 0
    for tag in tags:
        state = net.load_state(tag)
        if not state:
            print(f"{tag[len(plan.PREFIX) + 1:]}: not up")
            code = 1
            continue
        spec = parse_lab(json.dumps(state["spec"]))
        present = set(net.lab_namespaces())
        missing = [ns for ns in plan.namespaces_of(spec, tag) if ns not in present]
        cap = state.get("capacity_bps")
        print(f"{spec.name}: {spec.describe()}")
        print(f"  namespaces: {len(plan.namespaces_of(spec, tag)) - len(missing)} of "
              f"{len(plan.namespaces_of(spec, tag))}" + (f" (missing: {', '.join(missing)})" if missing else ""))
        if cap:
            alpha = state.get("alpha_us")
            print(f"  unshaped capacity {cap / 1e9:.2f} Gbit/s; socket latency {state.get('latency_us') or 0:.0f} us "
                  f"one way" + (f"; Chorus per message {alpha:.0f} us" if alpha else ""))
        for i, h in enumerate(spec.hosts):
            ns = plan.host_ns(tag, i)
            shaped = net.qdiscs_in(ns) if ns in present else {}
            nics = ", ".join(f"{plan.nic(r)} {plan.address(i, r, spec.addresses)} {'/'.join(shaped.get(plan.nic(r), ['?']))}"
                             for r in range(spec.nics))
            print(f"  {ns}: {h.name}, rack {h.rack}, {h.ranks} rank(s), {nics}")
        code = code or (1 if missing else 0)
    return code


def cmd_run(args, tools_dir):
    command = args.command
    if not command:
        raise LabError("no command: chorus-lab run ... -- CMD ARGS...")
    net.require_root()
    net.clean_stale()
    spec = spec_from(args)
    bind = args.bind_to == "core"
    with jobs.Stop() as stop, Session(spec, tools_dir, bind) as s:
        topo = s.topo_file() if os.path.exists(s.topo_file()) else None
        return jobs.run_ranks(spec, s.lab.tag, command, args.timeout, stop, topo, bind=bind)


def remeasure(lab, perf, bind, cluster_path, topo_path):
    """The lab's figures measured again after a sweep, and the model's cluster file rewritten with the mean of before
    and after: the machine changes state for minutes at a time (in one day's checks Chorus's per-message time came
    out at 9.3-16.5 us from lab to lab, in clusters), and a sweep lasts about a minute (docs/cost_model.md;
    perf/results/cost_model_lab.md, "How far one check is from the next")."""
    before = (lab.alpha_us, lab.chain_us, lab.context_switch_us)
    model.measure_link(lab, perf, bind)
    after = (lab.alpha_us, lab.chain_us, lab.context_switch_us)
    lab.alpha_us, lab.chain_us, lab.context_switch_us = (model.mean_of(b, a) for b, a in zip(before, after))
    lab.figures_before_after = {"latency_us": [before[0], after[0]], "chain_us": [before[1], after[1]],
                                "context_switch_us": [before[2], after[2]]}
    print(f"chorus-lab: after the sweep, {after[0] or 0:.1f} us per message (before: {before[0] or 0:.1f}), a chain "
          f"call {after[1] or 0:.1f} us (before: {before[1] or 0:.1f}); the model takes their means", file=sys.stderr)
    with open(topo_path) as f:
        cluster = model.cluster_of(lab, json.load(f))
    with open(cluster_path, "w") as f:
        json.dump(cluster, f, indent=1)


def cmd_sweep(args, tools_dir):
    net.require_root()
    net.clean_stale()
    spec = spec_from(args)
    os.makedirs(args.out, exist_ok=True)
    perf = args.perf or os.path.join(tools_dir, "chorus-perf")
    command = [perf, args.collective, "-b", args.b, "-e", args.e, "-f", str(args.f), "-n", str(args.n), "-w", "2",
               "--min-ms", str(sweep.steady_run_ms(spec))]
    raw = os.path.join(args.out, "chorus-perf.txt")
    bind = args.bind_to == "core"
    with jobs.Stop() as stop, Session(spec, tools_dir, bind) as s:
        topo_path = s.topo_file() if os.path.exists(s.topo_file()) else None
        lab = s.lab
        predicted = {}
        chorus_topo = os.path.join(tools_dir, "chorus-topo")
        if topo_path and os.path.exists(chorus_topo):
            with open(topo_path) as f:
                cluster = model.cluster_of(lab, json.load(f))
            cluster_path = os.path.join(args.out, "cluster.json")
            with open(cluster_path, "w") as f:
                json.dump(cluster, f, indent=1)
        # Without --algos: every algorithm the model prices for this world (hierarchical only with several ranks
        # per host), so that the default selection always has its rivals beside it.
        algos = args.algos
        if not algos and topo_path and os.path.exists(chorus_topo):
            algos = ",".join(model.algorithms(chorus_topo, cluster_path, spec.nranks, args.collective))
        if not algos:
            raise LabError("sweep: name the algorithms to compare (--algos ring,tree,...): chorus-topo could not "
                           "list them for this lab")
        command += ["--algos", algos]
        # The first job sweeps every size; --jobs N - 1 more measure the sizes up to SMALL_BYTES again, if any.
        small = command[:]
        small[small.index("-e") + 1] = str(min(sweep.parse_size(args.e), sweep.SMALL_BYTES))
        repeats = args.jobs - 1 if sweep.parse_size(args.b) <= sweep.SMALL_BYTES else 0
        tables = []
        for job, job_command in enumerate([command] + [small] * repeats):
            path = raw if job == 0 else os.path.join(args.out, f"chorus-perf.{job}.txt")
            with open(path, "w") as out:
                code = jobs.run_ranks(spec, s.lab.tag, job_command, args.timeout, stop, topo_path, rank0_out=out,
                                      bind=bind)
            with open(path) as f:
                text = f.read()
            if code != 0:
                raise LabError(f"chorus-perf exited {code} in the lab; its output: {path}")
            tables.append(sweep.parse_algos_table(text))
        table = sweep.median_rows(tables)
        chosen = {}
        if topo_path and os.path.exists(chorus_topo):
            sizes = sorted({b for b, _, _ in table if b > 0})  # 8 B over 4 ranks rounds to 0
            # What the ranks' model picked, from the figures they were given; then the figures measured again.
            chosen = model.selections(chorus_topo, cluster_path, spec.nranks, args.collective, sizes)
            if spec.latency_us is None:
                remeasure(lab, perf, bind, cluster_path, topo_path)
            predicted = model.predictions(chorus_topo, cluster_path, spec.nranks, args.collective, sizes)
    results = sweep.results_of(table, lab, args.collective, predicted, chosen)
    sweep.write_results(args.out, lab, args.collective, results, args.jobs)
    sweep.plot(tools_dir, args.out, f"{args.collective}, {spec.describe()}")
    print(f"chorus-lab: {len(results)} results in {args.out}/sweep.csv, sweep.json\n{sweep.summary(results)}")
    return 0


def add_lab_arguments(p):
    p.add_argument("lab", nargs="?", default="", help="lab file (else --hosts and the flags below: one switch)")
    p.add_argument("--hosts", type=int, default=0)
    p.add_argument("--ranks-per-host", type=int, default=1)
    p.add_argument("--rate", default="1gbit", help="each host's link, both ways (tc syntax: 200mbit, 1gbit)")
    p.add_argument("--mtu", type=int, default=DEFAULT_MTU,
                   help=f"every lab interface's MTU (default {DEFAULT_MTU}; 9000: jumbo frames)")
    p.add_argument("--timeout", type=float, default=0, help="seconds before the job is killed (0: none)")
    p.add_argument("--ipv6", action="store_true", help="IPv6-only hosts (ULA addresses, no IPv4): --addresses ipv6")
    p.add_argument("--addresses", choices=("ipv4", "ipv6", "ipv6-link-local"), default="ipv4",
                   help="the hosts' addresses: ipv4 (default), ipv6 (ULA only), ipv6-link-local (fe80:: only)")
    p.add_argument("--delay", default="", help="one-way delay per link direction, netem syntax (50us); needs netem")
    p.add_argument("--jitter", default="", help="delay variation, netem syntax; needs --delay and netem")
    p.add_argument("--loss", default="", help="packet loss, netem syntax (0.1%%); needs netem")
    p.add_argument("--bind-to", choices=("core", "none"), default="core",
                   help="core (default): each host's ranks bound to its share of the cores, as chorusrun --bind-to "
                        "core; none: left to the scheduler (a lab that is up keeps the latency it measured bound)")


def parser():
    p = argparse.ArgumentParser(prog="chorus-lab", description=USAGE, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="verb", required=True)
    u = sub.add_parser("up", help="bring up a lab file's lab and leave it up")
    u.add_argument("lab")
    d = sub.add_parser("down", help="tear down a lab that is up")
    d.add_argument("lab")
    s = sub.add_parser("status", help="the labs that are up")
    s.add_argument("lab", nargs="?", default="")
    r = sub.add_parser("run", help="CMD once per rank in the lab")
    add_lab_arguments(r)
    w = sub.add_parser("sweep", help="chorus-perf --algos in the lab, beside the model's predictions")
    add_lab_arguments(w)
    w.add_argument("--collective", default="allreduce")
    w.add_argument("--algos", default="", help="forced algorithms beside the default selection (comma list; default: "
                   "every one the cost model prices for the lab's world)")
    w.add_argument("-b", default="64K")
    w.add_argument("-e", default="16M")
    w.add_argument("-f", type=int, default=4)
    w.add_argument("-n", type=int, default=5, help="calls per algorithm and size per round")
    w.add_argument("--jobs", type=int, default=1,
                   help="the sizes up to 64 KiB measured in this many jobs (the first the whole sweep), each row's "
                        "median kept: a job's communicators keep a bias of their own at tens of us")
    w.add_argument("--perf", default="", help="the chorus-perf to run (default: the one beside chorus-lab)")
    w.add_argument("--out", required=True)
    c = sub.add_parser("clean", help="remove what killed labs left behind")
    c.add_argument("--all", action="store_true", help="every lab, the ones that are up too")
    return p


def main(argv, tools_dir):
    # The command is everything after the first "--", whatever it looks like.
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser().parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    args.command = command
    try:
        if args.verb == "clean":
            net.require_root()
            print(f"chorus-lab: removed {net.clean_stale(everything=args.all)} namespace(s)")
            return 0
        if args.verb in ("up", "down"):
            net.require_root()
            net.clean_stale()
            return cmd_up(args, tools_dir) if args.verb == "up" else cmd_down(args)
        if args.verb == "status":
            return cmd_status(args)
        if args.hosts < 0 or args.ranks_per_host < 1:
            raise LabError("--hosts and --ranks-per-host must be at least 1")
        if args.lab and args.lab.startswith("-"):
            raise LabError(f"unknown option {args.lab}")
        if args.verb == "sweep":
            if args.jobs < 1:
                raise LabError("--jobs must be at least 1")
            return cmd_sweep(args, tools_dir)
        return cmd_run(args, tools_dir)
    except LabError as e:
        print(f"chorus-lab: {e}", file=sys.stderr)
        return 2
