"""``fluid.incubate``: Fluid 1.8's incubating APIs that oar-dist provides (the collective fleet)."""
