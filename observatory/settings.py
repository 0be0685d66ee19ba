"""One settings model for observatory, read from ``OBSERVATORY_*`` environment variables.

Nested sections use ``__`` as the delimiter, e.g. ``OBSERVATORY_LAB__HISTORY_SIZE=20000``. Built once at start by
the command line and passed down; nothing reads it as a global.
"""

from __future__ import annotations

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class LabSettings(BaseModel):
    """How the embedded lab API server behaves."""

    history_size: int = Field(10_000, ge=1)
    """Watch events kept for resuming a watch from a resourceVersion; an older resourceVersion gets 410 Expired."""

    bookmark_interval: float = Field(5.0, gt=0)
    """Seconds between BOOKMARK events on watches that asked for ``allowWatchBookmarks=true``."""

    min_request_timeout: float = Field(1800.0, gt=0)
    """kube-apiserver's ``--min-request-timeout`` in seconds: a watch without ``timeoutSeconds`` ends after a random
    time between this and twice this, as upstream does."""

    state_save_interval: float = Field(10.0, gt=0)
    """Seconds between periodic saves when ``--state`` is given (the store is also saved on shutdown)."""

    watch_queue_limit: int = Field(100_000, ge=100)
    """Events queued for one slow watcher before the lab ends that watch (clients then re-watch)."""


class Settings(BaseSettings):
    """Everything observatory can be configured with. Command-line flags override these values."""

    model_config = SettingsConfigDict(env_prefix="OBSERVATORY_", env_nested_delimiter="__", extra="ignore")

    lab: LabSettings = LabSettings()
