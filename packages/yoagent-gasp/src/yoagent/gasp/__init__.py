"""yoagent.gasp: every agent run recorded in a git repository (GASP), restorable by clone
and replay, and the protocol's seven conformance checks."""

from ._errors import GaspError
from .checks import CheckReport, run_all
from .envelope import Actor, EnvelopeError, Event, new_id
from .extension import RecordingExtension, default_task
from .fold import Fold, LogProblem, SkippedOp, fold_events, fold_log
from .graph import Graph, Node, Relation
from .identity import Manifest, ManifestError, identity_hash, read_manifest
from .lease import Lease, LeaseCorruptError, LeaseError, LeaseHeldError
from .ops import (
    ArtifactRef,
    AttachArtifact,
    CreateNode,
    CreateRelation,
    DeleteRelation,
    MarkStale,
    Op,
    OpsError,
    TombstoneNode,
    UpdateNode,
    parse_ops,
)
from .recorder import (
    ExistingGoal,
    GoalNotFoundError,
    GoalRef,
    NewGoal,
    Recorder,
    RecorderBusyError,
)
from .recording import Recording, RecordingError
from .repository import AgentRepo, RepositoryError
from .restore import RestoredAgent, RestoreError, load, restore
from .summary import Summarizer, args_fingerprint, summarize

__all__ = [
    "Actor",
    "AgentRepo",
    "ArtifactRef",
    "AttachArtifact",
    "CheckReport",
    "CreateNode",
    "CreateRelation",
    "DeleteRelation",
    "EnvelopeError",
    "Event",
    "ExistingGoal",
    "Fold",
    "GaspError",
    "GoalNotFoundError",
    "GoalRef",
    "Graph",
    "Lease",
    "LeaseCorruptError",
    "LeaseError",
    "LeaseHeldError",
    "LogProblem",
    "Manifest",
    "ManifestError",
    "MarkStale",
    "NewGoal",
    "Node",
    "Op",
    "OpsError",
    "Recorder",
    "RecorderBusyError",
    "Recording",
    "RecordingError",
    "RecordingExtension",
    "Relation",
    "RepositoryError",
    "RestoreError",
    "RestoredAgent",
    "SkippedOp",
    "Summarizer",
    "TombstoneNode",
    "UpdateNode",
    "args_fingerprint",
    "default_task",
    "fold_events",
    "fold_log",
    "identity_hash",
    "load",
    "new_id",
    "parse_ops",
    "read_manifest",
    "restore",
    "run_all",
    "summarize",
]
