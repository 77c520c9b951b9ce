#!/usr/bin/python3
"""torch.distributed collectives on "chorus" and "gloo", side by side in one run: each rank joins a chorus world
and a gloo group over the same ranks, and every size is timed on both, alternating rounds, medians reported.
The columns follow chorus-perf (nccl-tests): size, count, type, redop, root, then time, algbw and busbw for each
backend (torch's collectives are in place), #wrong, and gloo's time over chorus's.

  /usr/bin/python3 perf/torch/collective_bench.py -n 2 allreduce -b 8 -e 64M -f 4
  /usr/bin/python3 perf/torch/collective_bench.py -n 2 alltoall -b 16M -e 16M
  /usr/bin/python3 perf/torch/collective_bench.py -n 2 overhead    # 8 B allreduce: torch layer vs the C ABI

Run from the source tree after building (PYTHONPATH is found) or with PYTHONPATH=PREFIX/lib/python3/dist-packages.
"""

import argparse
import statistics
import sys
import time

from side_by_side import join_both, spawn

import torch
import torch.distributed as dist

COLLECTIVES = ("allreduce", "alltoall", "allgather", "broadcast", "reducescatter", "overhead")


def parse_bytes(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def sizes(args):
    size, out = args.minbytes, []
    while size <= args.maxbytes:
        out.append(size)
        size *= args.stepfactor
    return out


def bus_factor(coll, n):
    # nccl-tests' bus bandwidth factors.
    return {"allreduce": 2 * (n - 1) / n, "alltoall": (n - 1) / n, "allgather": (n - 1) / n,
            "broadcast": 1.0, "reducescatter": (n - 1) / n}[coll]


def iterations(nbytes, args):
    if args.iters:
        return args.iters
    # About 0.2 s of traffic per round at ~5 GB/s, between 5 and 2000 calls.
    return max(5, min(2000, int(1e9 / max(nbytes, 1) / 5)))


def make_call(coll, nbytes, group, n, rank):
    """The timed call and a check of its result (number of wrong elements)."""
    count = max(1, nbytes // 4)
    if coll in ("allreduce", "overhead"):
        x = torch.full((count,), float(rank + 1))
        want = float(n * (n + 1) // 2)

        def call():
            dist.all_reduce(x, group=group)

        def wrong():
            x.fill_(rank + 1)
            dist.all_reduce(x, group=group)
            return int((x != want).sum())
        return call, wrong, count
    if coll == "alltoall":
        count -= count % n
        inp = torch.arange(count, dtype=torch.float32) + rank * count
        out = torch.empty(count)

        def call():
            dist.all_to_all_single(out, inp, group=group)

        def wrong():
            call()
            block = count // n
            want = torch.cat([torch.arange(rank * block, (rank + 1) * block, dtype=torch.float32) + p * count
                              for p in range(n)])
            return int((out != want).sum())
        return call, wrong, count
    if coll == "allgather":
        per = max(1, count // n)
        inp = torch.full((per,), float(rank))
        out = torch.empty(per * n)

        def call():
            dist.all_gather_into_tensor(out, inp, group=group)

        def wrong():
            call()
            want = torch.arange(n, dtype=torch.float32).repeat_interleave(per)
            return int((out != want).sum())
        return call, wrong, per * n
    if coll == "broadcast":
        x = torch.full((count,), float(rank))

        def call():
            dist.broadcast(x, src=0, group=group)

        def wrong():
            x.fill_(rank)
            call()
            return int((x != 0).sum())
        return call, wrong, count
    if coll == "reducescatter":
        per = max(1, count // n)
        inp = torch.ones(per * n)
        out = torch.empty(per)

        def call():
            dist.reduce_scatter_tensor(out, inp, group=group)

        def wrong():
            call()
            return int((out != float(n)).sum())
        return call, wrong, per * n
    raise ValueError(coll)


def time_round(call, iters, group):
    dist.barrier(group=group)
    start = time.perf_counter()
    for _ in range(iters):
        call()
    return (time.perf_counter() - start) / iters


def overhead(rank, args, group, gloo_group, results):
    """An 8-byte in-place allreduce through torch (dist.all_reduce, which waits for its Work) against the same call
    made directly on the C ABI (chorusAllReduce on the group's communicator, blocking), alternating rounds."""
    import chorus_torch._C as C
    x = torch.ones(2)
    iters = args.iters or 20000
    torch_times, c_times, gloo_times = [], [], []
    gloo = gloo_group
    y = torch.ones(2)
    for _ in range(args.rounds):
        torch_times.append(time_round(lambda: dist.all_reduce(x, group=group), iters, group))
        dist.barrier(group=group)
        c_times.append(C.time_c_allreduce(group, 8, iters))
        gloo_times.append(time_round(lambda: dist.all_reduce(y, group=gloo), max(1, iters // 10), gloo))
    if rank == 0:
        results.put((statistics.median(torch_times), statistics.median(c_times), statistics.median(gloo_times)))


def rank_main(rank, args, init_file, results):
    torch.set_num_threads(1)
    n = args.nranks
    groups = join_both(rank, n, init_file)
    coll = args.collective
    if coll == "overhead":
        overhead(rank, args, groups["chorus"], groups["gloo"], results)
        dist.destroy_process_group()
        return
    rows = []
    for nbytes in sizes(args):
        per_backend = {}
        calls = {b: make_call(coll, nbytes, g, n, rank) for b, g in groups.items()}
        iters = iterations(nbytes, args)
        for b, (call, _, _) in calls.items():  # warm-up: connections, first touches
            for _ in range(max(2, iters // 10)):
                call()
        times = {b: [] for b in groups}
        for _ in range(args.rounds):
            for b, (call, _, _) in calls.items():
                times[b].append(time_round(call, iters, groups[b]))
        for b, (_, wrong, count) in calls.items():
            per_backend[b] = (statistics.median(times[b]), wrong(), count)
        rows.append((nbytes, per_backend))
    if rank == 0:
        results.put(rows)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("collective", choices=COLLECTIVES)
    parser.add_argument("-n", "--nranks", type=int, default=2)
    parser.add_argument("-b", "--minbytes", type=parse_bytes, default=parse_bytes("8"))
    parser.add_argument("-e", "--maxbytes", type=parse_bytes, default=parse_bytes("64M"))
    parser.add_argument("-f", "--stepfactor", type=int, default=4)
    parser.add_argument("-r", "--rounds", type=int, default=5, help="alternating rounds per size (median)")
    parser.add_argument("--iters", type=int, default=0, help="calls per round (default: by size)")
    args = parser.parse_args()
    result = spawn(rank_main, args, args.nranks)
    coll, n = args.collective, args.nranks
    if coll == "overhead":
        t_torch, t_c, t_gloo = result
        print(f"# 8-byte float32 allreduce, {n} ranks, medians of {args.rounds} alternating rounds")
        print(f"  chorus through torch  {t_torch * 1e6:8.2f} us")
        print(f"  chorus C ABI          {t_c * 1e6:8.2f} us   (torch layer adds {(t_torch - t_c) * 1e6:.2f} us)")
        print(f"  gloo through torch    {t_gloo * 1e6:8.2f} us   (chorus/gloo {t_torch / t_gloo:.3f})")
        return
    rows = result
    factor = bus_factor(coll, n)
    print(f"# torch {torch.__version__} collective {coll}: nranks {n}, float32, sum, in place, "
          f"{args.rounds} alternating rounds, medians")
    print(f"# {'size':>10} {'count':>12} {'type':>8} {'redop':>6} {'root':>5}"
          f" {'chorus us':>10} {'algbw':>7} {'busbw':>7} {'gloo us':>10} {'algbw':>7} {'busbw':>7}"
          f" {'#wrong':>6} {'gloo/chorus':>11}")
    for nbytes, per in rows:
        cols = []
        wrong = 0
        for b in ("chorus", "gloo"):
            t, w, count = per[b]
            wrong += w
            algbw = nbytes / t / 1e9
            cols.append(f"{t * 1e6:>10.2f} {algbw:>7.2f} {algbw * factor:>7.2f}")
        count = per["chorus"][2]
        root = 0 if coll == "broadcast" else -1
        print(f"  {nbytes:>10} {count:>12} {'float32':>8} {'sum':>6} {root:>5} {cols[0]} {cols[1]}"
              f" {wrong:>6} {per['gloo'][0] / per['chorus'][0]:>11.2f}")
    if any(per[b][1] for _, per in rows for b in per):
        sys.exit("collective_bench: wrong results")


if __name__ == "__main__":
    main()
