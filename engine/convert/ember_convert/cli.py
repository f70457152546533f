"""Entry point shared by the scripts: bad input is one line on stderr and exit status 1."""

import sys

from .errors import ConvertError


def run(main, prog):
    try:
        main()
    except (ConvertError, OSError) as e:  # OSError names the file it could not open or write
        print("%s: error: %s" % (prog, e), file=sys.stderr)
        sys.exit(1)
