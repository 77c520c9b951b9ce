"""chorus-lab's pieces: the lab file (spec), the commands that build a lab (plan), running them and the jobs in it
(net, jobs), sweeps with the cost model's predictions (sweep), and the command line (cli)."""
