"""``oar.distributed``: the entry points of multi-process training that live in core's namespace.

Core cannot import plugins by name: ``python -m oar.distributed.launch`` is a
thin module here that finds the launcher the ``oar-dist`` plugin contributes
(through the ``oar_fluid_api`` hook) or says what to install.
"""

from __future__ import annotations
