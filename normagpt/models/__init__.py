"""The norms corpus (documents and their pages: `normagpt.models.corpus`) and the agent's
runs with their checkpoints (`normagpt.models.agent`). Import them from here.
"""

from normagpt.models.agent import (
    AgentRun,
    AgentStep,
    ClaimCheck,
    LlmCall,
    ReviewQueueRun,
    RunEvent,
    Thread,
    run_public_id,
)
from normagpt.models.corpus import (
    DOCUMENT_UPLOAD_TO,
    NormAbbreviation,
    NormAmendment,
    NormAmendmentChange,
    NormAmendmentOrder,
    NormClause,
    NormDocument,
    NormDocumentAlias,
    NormPage,
    NormPageDraft,
    NormTerm,
    document_in_force,
    holds_on,
)

__all__ = [
    "DOCUMENT_UPLOAD_TO",
    "AgentRun",
    "AgentStep",
    "ClaimCheck",
    "LlmCall",
    "NormAbbreviation",
    "NormAmendment",
    "NormAmendmentChange",
    "NormAmendmentOrder",
    "NormClause",
    "NormDocument",
    "NormDocumentAlias",
    "NormPage",
    "NormPageDraft",
    "NormTerm",
    "ReviewQueueRun",
    "RunEvent",
    "Thread",
    "document_in_force",
    "holds_on",
    "run_public_id",
]
