"""Admin of the norms agent: documents with page thumbnails and PDF upload, runs with their
steps, and the review queue where a reviewer's note sends a run back to work.

`corpus` registers the norm documents and their amendments, `runs` the agent's runs."""

from normagpt.admin import corpus, runs

__all__ = ["corpus", "runs"]
