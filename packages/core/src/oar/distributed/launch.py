"""``python -m oar.distributed.launch``: start a multi-process training job (Paddle's launch).

The launcher itself belongs to the ``oar-dist`` plugin (it starts ranks through
``mpiexec``); this module only finds it, so the command keeps Paddle's module
path and a missing plugin gives ``MissingPluginError`` with the pip command.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the plugin's launcher on ``argv`` (default ``sys.argv[1:]``); its exit status."""
    from oar._facade import lookup

    launcher = lookup("oar.distributed.launch")
    return int(launcher(list(sys.argv[1:] if argv is None else argv)) or 0)


if __name__ == "__main__":
    sys.exit(main())
