"""``python -m symshard``: the same as the ``symshard`` command."""

import sys

from .cli import main

sys.exit(main())
