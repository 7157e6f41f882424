"""``python -m oar ...`` runs the oar command line."""

from oar.cli import main

raise SystemExit(main())
