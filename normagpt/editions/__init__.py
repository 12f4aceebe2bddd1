"""Editions and amendments: which text of a clause holds on a day.

An edition is a document of the corpus (`NormDocument`: «СП 63.13330.2012», then
«СП 63.13330.2018») with the days it was in force. An amendment (`NormAmendment`,
Изменение № N) changes an edition from its day on. Its text is read as amendments are
really written (`reading`, `acts`: pure, no database): every order in it is read into
changes (`NormAmendmentChange`) or named with the reason it was not (`NormAmendmentOrder`).
Applying them (`edition`, `applying`) makes each changed clause a version of its own (a
`NormClause` with its `amendment` and the days it holds), searched like any clause; the
text it changed holds until that day. Search, the agent's pages and the claim checks read,
for a day (`as_of`), the editions in force then and the clause versions holding then; a
clause an amendment in force names but could not change carries its mark
(`selectors.clause_marks`).
"""

from normagpt.editions.amendments import (
    amendment_delete,
    amendment_save,
    change_label,
    changes_parse,
    changes_required,
    changes_store,
    changes_unread,
    orders_store,
    reading_checked,
    target_label,
)
from normagpt.editions.applying import amendments_apply
from normagpt.editions.entities import (
    ADD,
    APPEND,
    INSERT,
    REPLACE,
    SECTION,
    SUBSTITUTE,
    TITLE,
    UNREAD_SHOWN,
    Change,
    Order,
    Reading,
)
from normagpt.editions.files import amendment_text
from normagpt.editions.orders import amendment_read
from normagpt.editions.selectors import (
    amendment_label,
    clause_marks,
    clause_version,
    day_of,
    edition_status,
    source_edition,
)
from normagpt.models import document_in_force, holds_on

__all__ = [
    "ADD",
    "APPEND",
    "INSERT",
    "REPLACE",
    "SECTION",
    "SUBSTITUTE",
    "TITLE",
    "UNREAD_SHOWN",
    "Change",
    "Order",
    "Reading",
    "amendment_delete",
    "amendment_label",
    "amendment_read",
    "amendment_save",
    "amendment_text",
    "amendments_apply",
    "change_label",
    "changes_parse",
    "changes_required",
    "changes_store",
    "changes_unread",
    "clause_marks",
    "clause_version",
    "day_of",
    "document_in_force",  # the day rules, for search (from the models)
    "edition_status",
    "holds_on",
    "orders_store",
    "reading_checked",
    "source_edition",
    "target_label",
]
