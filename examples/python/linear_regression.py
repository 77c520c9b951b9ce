#!/usr/bin/python3
"""Data-parallel SGD with numpy and chorus: a linear regression whose samples are spread over the ranks. Each rank
computes the gradient on its own samples, allreduce averages the gradients, and every rank takes the same step, so
the weights stay equal everywhere. Exits non-zero unless they reach the true weights.

  chorusrun -n 2 /usr/bin/python3 examples/python/linear_regression.py

chorus is found in the build tree, or through PYTHONPATH=PREFIX/lib/python3/dist-packages once installed.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "python"))

import numpy as np  # noqa: E402

import chorus  # noqa: E402

FEATURES, SAMPLES_PER_RANK, STEPS, LEARNING_RATE = 16, 512, 200, 0.1


def report(comm, pending):
    """Prints a loss reduced in the background (a Request), once it is done."""
    if pending is not None:
        step, request = pending
        loss = request.wait()[0]
        if comm.rank == 0:
            print(f"step {step:4d}  mean loss {loss:.6f}")


def main():
    with chorus.Comm.from_env() as comm:
        true_weights = np.random.default_rng(0).normal(size=FEATURES)  # the same on every rank
        shard = np.random.default_rng(1 + comm.rank)  # each rank's own samples
        x = shard.normal(size=(SAMPLES_PER_RANK, FEATURES))
        y = x @ true_weights + 0.01 * shard.normal(size=SAMPLES_PER_RANK)

        weights = np.random.default_rng(2 + comm.rank).normal(size=FEATURES)
        comm.broadcast(weights, root=0)  # one starting point for all
        pending = None
        for step in range(STEPS):
            error = x @ weights - y
            gradient = 2 * x.T @ error / SAMPLES_PER_RANK
            comm.allreduce(gradient, chorus.AVG)
            weights -= LEARNING_RATE * gradient
            if step % 50 == 0:
                # The mean loss is for printing only: it is reduced in the background while the next steps run.
                report(comm, pending)
                pending = (step, comm.allreduce(np.array([np.mean(error ** 2)]), "avg", async_op=True))
        report(comm, pending)

        # Every rank took the same steps: the weights are equal everywhere (checked against rank 0's).
        rank0 = weights.copy()
        comm.broadcast(rank0, root=0)
        gap = float(np.max(np.abs(weights - true_weights)))
        if comm.rank == 0:
            print(f"{comm.size} ranks, {STEPS} steps: largest weight error {gap:.4f}")
        if not np.array_equal(rank0, weights) or gap > 0.01:
            sys.exit(f"rank {comm.rank}: weights differ across ranks or did not converge (error {gap})")


if __name__ == "__main__":
    main()
