"""``python -m warclake``: the ``warclake`` command."""
import sys

from warclake.cli.main import main

sys.exit(main())
