"""Project-level Celery tasks."""

from __future__ import annotations

import os
import socket

from celery import shared_task


@shared_task(name="project.ping")
def ping_task(payload: str = "ping") -> dict[str, str | int]:
    """Echo `payload` with the host and process that ran it: proves the queue end to end."""
    return {"echo": payload, "host": socket.gethostname(), "pid": os.getpid()}
