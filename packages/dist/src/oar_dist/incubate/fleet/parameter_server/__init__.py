"""``fluid.incubate.fleet.parameter_server``: fleet over parameter servers."""
