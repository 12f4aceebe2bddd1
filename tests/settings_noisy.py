"""Settings for the stdout-purity test: the project's, plus a tool that makes noise."""

from config.settings import *  # noqa: F403
from config.settings import MCP_TOOL_MODULES

MCP_TOOL_MODULES = [*MCP_TOOL_MODULES, "tests.noisy_tools"]
