"""``fluid.incubate.fleet.base``: role makers (who this process is in the job)."""
