"""The parameter-server runtime: wire format, ZeroMQ transport, trainer connections, pserver loop."""

from oar_dist.pserver.errors import PserverError

__all__ = ["PserverError"]
