"""``python -m noema`` runs the CLI."""

import sys

from noema.cli import main

sys.exit(main())
