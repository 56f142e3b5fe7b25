"""Worker deployments: the release a worker serves, for Temporal's Worker Versioning.

A worker that joins a deployment reports a version (deployment name + build ID). Sessions
are pinned: each run of a session stays on the version it started on, so a release never
replays a running turn (or an approval that waits for days) with code it was not written
with. A session moves to the deployment's current version at a turn boundary, by
continuing as new (see `docs/production/upgrades.md`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.worker import WorkerDeploymentConfig

from sessionflow._environment import read_env

__all__ = ["BUILD_ID_ENV", "DEPLOYMENT_NAME_ENV", "WorkerDeployment"]

DEPLOYMENT_NAME_ENV = "SESSIONFLOW_DEPLOYMENT_NAME"
"""Environment variable naming the worker deployment a worker process joins."""
BUILD_ID_ENV = "SESSIONFLOW_BUILD_ID"
"""Environment variable with the build ID of the code a worker process runs."""

# Temporal writes a version as "<deployment>.<build ID>" (and "<deployment>:<build ID>" in
# visibility), so neither separator may appear in a deployment name; build IDs may hold dots.
_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_/-]{0,254}$")
_BUILD_ID = re.compile(r"^[A-Za-z0-9_.+-][A-Za-z0-9_.+/-]{0,254}$")


@dataclass(frozen=True)
class WorkerDeployment:
    """The worker deployment version a worker serves.

    Attributes:
        name: The deployment, one per service (e.g. ``support-agents``); the same for every release.
        build_id: The release, different for every build whose code differs (a commit hash, a tag).
    """

    name: str
    build_id: str

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(
                f"deployment name {self.name!r} must be 1-255 letters, digits, '_', '-' or '/' "
                "(no '.' or ':', which Temporal uses to join it with the build ID)"
            )
        if not _BUILD_ID.match(self.build_id):
            raise ValueError(
                f"build ID {self.build_id!r} must be 1-255 letters, digits, '.', '_', '+', '-' or '/'"
            )

    @property
    def version(self) -> str:
        """``<name>:<build_id>``, as visibility's ``TemporalWorkerDeploymentVersion`` holds it."""
        return f"{self.name}:{self.build_id}"

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> WorkerDeployment | None:
        """The deployment named by ``$SESSIONFLOW_DEPLOYMENT_NAME`` and ``$SESSIONFLOW_BUILD_ID``, if any.

        A deployment name without a build ID is an error: every release needs its own build ID,
        or a new release would take over the turns pinned to the old one.
        """
        env = os.environ if environ is None else environ
        name = read_env(DEPLOYMENT_NAME_ENV, "", environ=env).strip()
        if not name:
            return None
        build_id = read_env(BUILD_ID_ENV, "", environ=env).strip()
        if not build_id:
            raise ValueError(
                f"${DEPLOYMENT_NAME_ENV} is {name!r} but ${BUILD_ID_ENV} is not set: "
                "a worker that joins a deployment needs the build ID of its release"
            )
        return cls(name, build_id)

    def worker_config(self) -> WorkerDeploymentConfig:
        """Sessions are pinned to the version they start on (a run never changes code)."""
        return WorkerDeploymentConfig(
            version=WorkerDeploymentVersion(self.name, self.build_id),
            use_worker_versioning=True,
            default_versioning_behavior=VersioningBehavior.PINNED,
        )
