"""``python -m observatory`` is the same as the ``observatory`` console script."""

from observatory.cli import console_main

raise SystemExit(console_main())
