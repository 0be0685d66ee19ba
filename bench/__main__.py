"""``python -m bench NAME [options]``: run one benchmark (``scale``, ``lab``, ``cluster``, ``watchmem``); see
bench/README.md.

The older benchmarks still run as modules too (``python -m bench.lab_bench``, ``python -m bench.cluster_bench``).
"""

from __future__ import annotations

import runpy
import sys

USAGE = "usage: python -m bench {scale,lab,cluster,watchmem} [options]   (python -m bench NAME --help for each)"


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name == "scale":
        from bench.scale_bench import main as scale_main

        return scale_main(rest)
    if name == "lab":
        from bench.lab_bench import main as lab_main

        return lab_main(rest)
    if name == "watchmem":
        from bench.watch_memory import main as watchmem_main

        return watchmem_main(rest)
    if name == "cluster":
        sys.argv = ["python -m bench.cluster_bench", *rest]
        runpy.run_module("bench.cluster_bench", run_name="__main__")
        return 0
    print(f"python -m bench: unknown benchmark {name!r}\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
