"""Settings for the multi-process MCP tests: the project's, plus a long tool with progress."""

from config.settings import *  # noqa: F403
from config.settings import MCP_TOOL_MODULES

MCP_TOOL_MODULES = [*MCP_TOOL_MODULES, "tests.scale_tools"]
