"""``python -m noema.cli`` runs the CLI, as ``python -m noema`` does."""

import sys

from noema.cli.app import main

sys.exit(main())
