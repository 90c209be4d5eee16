"""python -m codemod.simulate: see codemod/simulate/_cli.py."""

import sys

from ._cli import main

sys.exit(main())
