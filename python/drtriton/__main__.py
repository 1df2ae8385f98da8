import sys

from drtriton.cli import main

sys.exit(main())
