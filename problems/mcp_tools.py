"""MCP tools of the СДАМ ГИА problem bank (the seven sdamgia_* tools)."""

from config.mcp_registry import ToolRegistry

registry = ToolRegistry(
    app="problems",
    title="СДАМ ГИА problem bank",
    description=(
        "Problems of the Russian ЕГЭ and ОГЭ exams from the {subject}-{ege|oge}.sdamgia.ru "
        "sites: get a problem, search by keywords or by a (possibly OCR-damaged) condition "
        "text, browse the catalog, categories and tests. Cached in the database."
    ),
)
