"""Tests of `explorer.interview`: the procedure, planning, replay, deadlines and sweeps."""
