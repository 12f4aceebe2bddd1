"""A tool that prints, logs and warns while it runs (stdout-purity test only)."""

import logging
import sys
import warnings

from core.registry import ToolRegistry

registry = ToolRegistry(app="noisy", title="Noise")
logger = logging.getLogger("tests.noisy")


@registry.tool(read_only=True, open_world=False)
def noisy(times: int = 3) -> str:
    """Writes to stdout, the log and the warnings machinery, then answers."""
    for i in range(times):
        print(f"stray print {i}")  # noqa: T201 (the point of the test)
        print(f"partial line without newline {i}", end="")  # noqa: T201
        sys.stdout.write("direct stdout write\n")
        logger.warning("log line %d", i)
        warnings.warn(f"a warning {i}", UserWarning, stacklevel=1)
    return "done"


print("stray print at import time")  # noqa: T201
