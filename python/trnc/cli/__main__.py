"""``python -m trnc.cli``: the same as the ``trnc`` command."""

import sys

from . import main

sys.exit(main())
