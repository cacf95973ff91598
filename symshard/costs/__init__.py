"""What work costs on a machine: the one costing module, collectives, placements and calibration.

:mod:`.costmodels` is the one place a collective's bytes, hops and time are computed (the book's
and the ring model, NCCL's latency on GPUs, levels of a network); :mod:`.collectives` are the
AllGather, ReduceScatter, AllReduce, AllToAll and permute values, and :mod:`.collective_cost` the
record of what one costs, filled in by asking the costing module; :mod:`.placement` says what each
device holds and its bytes; :mod:`.calibrate` fits the costing module's network figures to
nccl-tests measurements, so it sits above it.

It may import the foundation, :mod:`symshard.algebra`, :mod:`symshard.notation` and
:mod:`symshard.machines`.
"""
