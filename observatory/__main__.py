"""``python -m observatory`` is the same as the ``observatory`` console script."""

from observatory.cli import main

raise SystemExit(main())
