"""``fluid.incubate.fleet``: the fleet API; ``fleet.collective`` for collective training."""
