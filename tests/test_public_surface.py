"""Every package's public names, pinned: an addition or a removal fails until reviewed.

Like httpx's exported-members test: the layout of a package's private modules is free to
change; what ``__all__`` offers is the contract. When a change here is intended, update
the list in the same commit (and the package's CHANGELOG). New packages add their list.
"""

from __future__ import annotations

import importlib
import types
import warnings

import pytest

CORE = [
    "Agent",
    "AgentBusyError",
    "RunStream",
    "RunSettings",
    "ExecutionLimits",
    "RetryConfig",
    "ContextConfig",
    "LlmCompaction",
    "ToolExecution",
    "CancelToken",
    "RunOutcome",
    "RunEnd",
    "StopCause",
    "ModelConfig",
    "ApiProtocol",
    "ThinkingLevel",
    "CacheConfig",
    "CostConfig",
    "ContextTier",
    "AnthropicCompat",
    "OpenAiCompat",
    "GoogleCompat",
    "cost_of",
    "resolve_cost",
    "AgentMessage",
    "UserMessage",
    "AssistantMessage",
    "ToolResultMessage",
    "CustomMessage",
    "StopReason",
    "Usage",
    "TextContent",
    "ImageContent",
    "ThinkingContent",
    "ToolCall",
    "message_adapter",
    "messages_adapter",
    "AgentEvent",
    "AgentStart",
    "TurnStart",
    "MessageStart",
    "MessageUpdate",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "MessageEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolExecutionEnd",
    "ProgressMessage",
    "SubAgentEvent",
    "InputRejected",
    "ProviderRetry",
    "RunPaused",
    "TurnEnd",
    "AgentEnd",
    "event_adapter",
    "AgentTool",
    "ToolContext",
    "ToolResult",
    "ToolError",
    "tool",
    "ModelTool",
    "ToolArguments",
    "ToolSource",
    "SubAgentTool",
    "ToolCallRequest",
    "ToolDecision",
    "Allow",
    "Deny",
    "Modify",
    "Defer",
    "ApprovalDecision",
    "PendingApproval",
    "PendingCall",
    "ResumeError",
    "Extension",
    "Budget",
    "YoagentError",
    "ProviderError",
    "ErrorKind",
    "MissingApiKeyError",
    "RunFailedError",
    "StructuredOutputError",
    "NoStructuredOutputError",
    "StructuredParseError",
    "StructuredProviderError",
    "Session",
    "SessionError",
    "SessionStats",
    "SkillSet",
    "Skill",
    "SkillProblem",
    "SkillError",
    "load_skills",
    "ReadSkillTool",
    "SharedState",
    "SharedStateTool",
    "MockProvider",
    "MockReply",
]


CORE_PROVIDER = [
    "AUTOLOAD_GROUP",
    "ENTRY_POINT_GROUP",
    "FALLBACK_KEY_VARIABLES",
    "OVERFLOW_PHRASES",
    "RATE_LIMIT_CODES",
    "RATE_LIMIT_STATUSES",
    "SELF_AUTHENTICATING",
    "AnthropicCompat",
    "ApiProtocol",
    "AssistantContent",
    "AssistantMessage",
    "CacheConfig",
    "Compat",
    "DeltaSink",
    "ErrorKind",
    "GoogleCompat",
    "ImageContent",
    "Message",
    "ModelConfig",
    "OpenAiCompat",
    "OutputSchema",
    "ProviderError",
    "ProviderNotFoundError",
    "ProviderRegistry",
    "StopReason",
    "StreamConfig",
    "StreamDelta",
    "StreamProvider",
    "TextContent",
    "TextDelta",
    "ThinkingContent",
    "ThinkingDelta",
    "ThinkingLevel",
    "ToolCall",
    "ToolCallDelta",
    "ToolDefinition",
    "ToolResultMessage",
    "TranscriptError",
    "Usage",
    "UserContent",
    "UserMessage",
    "add_usd",
    "classify",
    "cost_of",
    "default_registry",
    "is_overflow_text",
    "key_variables",
    "parse_retry_after",
    "price_resolver",
    "resolve_api_key",
    "resolve_cost",
    "set_price_resolver",
    "validate_transcript",
    "warn_once",
    "with_env_key",
]

CORE_SUPPORT = [
    "CUT_MARKER",
    "HTTP_POOL_LIMITS",
    "HTTP_TIMEOUT",
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "RUN_ID_VARIABLE",
    "SECRET_VARIABLE_PATTERNS",
    "BoundedMap",
    "ChildProcess",
    "Command",
    "LazyTypeAdapter",
    "LogScrubGuard",
    "PipeCapture",
    "Scrubber",
    "SecretField",
    "StreamScrubber",
    "UrlParts",
    "Wakeup",
    "atomic_write",
    "cut_middle",
    "display_url",
    "endpoint_from_base",
    "header_secrets",
    "html_summary",
    "http_client",
    "is_credential_name",
    "is_secret_variable",
    "kill_children",
    "looks_like_key",
    "merge_headers",
    "reset_warn_once",
    "scrub_logs",
    "shared_ssl_context",
    "spawn_process",
    "split_url",
    "utf8_decode",
    "utf8_safe",
    "utf8_safe_json",
    "warn_once",
]


CORE_EXTENSION = [
    "Extension",
    "ExtensionMode",
    "RunHooks",
    "RunContext",
    "FINISH_TIMEOUT",
    "Budget",
    "FilterResult",
    "Pass",
    "Warn",
    "Reject",
    "ModelVerdict",
    "Proceed",
    "StopRun",
    "FailRun",
    "ToolDecision",
    "Allow",
    "Deny",
    "Modify",
    "Defer",
    "ApprovalDecision",
    "ToolOutput",
    "ContinueRun",
    "TurnContext",
    "ToolCallRequest",
    "ReplyContext",
    "UserRequestParts",
    "UserRequestSource",
    "user_request_parts",
    "RunOutcome",
    "RunEnd",
    "StopCause",
    "RunSpend",
    "SpendHandle",
    "ModelSpend",
    "DecisionSpend",
    "CompactionSpend",
    "ExtensionSpend",
    "SubAgentSpend",
    "ToolMiddleware",
    "MiddlewareLike",
    "InputFilter",
    "TurnHook",
    "AGENT_STOPPED_PREFIX",
    "CANCELLED_MARKER",
    "EXTENSION_FAILED_PREFIX",
    "EXTENSION_MESSAGE_PREFIX",
    "LOOP_ABORT_PREFIX",
    "LOOP_NUDGE_PREFIX",
    "HELD_RESULT",
    "is_loop_injected",
]


CORE_CONTEXT = [
    "ContextConfig",
    "ContextSetting",
    "LlmCompaction",
    "estimate_tokens",
    "estimate_text",
    "estimate_messages",
    "ContextTracker",
    "compact_messages",
    "compact_after_overflow",
    "CompactionResult",
    "context_messages",
    "COMPACTION_MARKER",
    "SUMMARY_PREFIX",
    "is_compaction_message",
]


CORE_LOOP = [
    "agent_loop",
    "agent_loop_continue",
    "agent_loop_resume",
    "AgentLoopConfig",
    "AgentContext",
    "RunOptions",
    "PromptInput",
    "EventSink",
    "RetrySafeEvents",
    "retry_safe_events",
    "last_assistant",
    "AgentFactory",
    "agent_from",
    "FunctionTool",
    "Delegation",
    "DEFAULT_MAX_DEPTH",
    "SUB_AGENT_LIMITS",
    "SUB_AGENT_SETTINGS",
    "SUB_AGENT_STATS_KEY",
]


CORE_STATE = [
    "SharedState",
    "SharedStateTool",
    "SharedStateBackend",
    "MemoryBackend",
    "FileBackend",
    "SharedStateSink",
    "ToolOutputSink",
    "SharedStateError",
    "SharedStateFullError",
    "InvalidKeyError",
]


CORE_SESSION = [
    "Session",
    "SessionEntry",
    "LoadWarning",
    "SessionError",
    "SessionCorruptError",
]


PROVIDERS = [
    "AnthropicProvider",
    "AzureOpenAiResponsesProvider",
    "BedrockProvider",
    "GoogleProvider",
    "OpenAiCompletionsProvider",
    "OpenAiResponsesProvider",
    "ProvidersError",
    "StreamLimits",
    "VertexProvider",
    "aclose_shared_clients",
    "models",
]


TOOLS = [
    "MAX_SYMLINK_HOPS",
    "BashTool",
    "CommandSandbox",
    "EditFileTool",
    "ListFilesTool",
    "PathSandbox",
    "ReadFileTool",
    "SandboxError",
    "SandboxPolicy",
    "SandboxUnavailableError",
    "SearchTool",
    "ToolsError",
    "WriteFileTool",
    "default_tools",
    "find_ripgrep",
]


CLI = [
    "CliError",
    "build_parser",
    "main",
    "run",
]


MCP = [
    "CLOSE_GRACE",
    "HANDSHAKE_TIMEOUT",
    "INHERITED_ENV",
    "PREFIX_SEPARATOR",
    "RESERVED_HEADERS",
    "STDIO_CALL_TIMEOUT",
    "McpClient",
    "McpError",
    "McpToolAdapter",
    "McpToolSource",
    "McpTransport",
    "with_mcp_server",
    "with_mcp_server_http",
    "with_mcp_server_stdio",
]


PRICING = [
    "DECISION_PRICE_KEYS",
    "DEFAULT_FETCH_TIMEOUT",
    "MAX_PLAUSIBLE_RATE",
    "MODELS_DEV",
    "MODELS_DEV_URL",
    "PRICED_PROVIDERS",
    "PRICES_ENV_VAR",
    "PROVIDER_ALIASES",
    "SCHEMA_VERSION",
    "AuditFinding",
    "AuditReport",
    "CacheOptions",
    "CacheProblem",
    "CachedPrices",
    "EnvOverride",
    "FetchReport",
    "GenaiPrices",
    "InstallPolicy",
    "LivePrices",
    "OverrideReport",
    "PriceChange",
    "PriceDataError",
    "PriceEntry",
    "PriceError",
    "PriceFetchError",
    "PriceFileError",
    "PriceOrigin",
    "PriceSource",
    "PriceTable",
    "SkippedModel",
    "UnsupportedSchemaError",
    "audit",
    "clear_bundled",
    "clear_fetched",
    "clear_override",
    "enable_bundled",
    "enable_live",
    "enable_live_cached",
    "env_override_status",
    "fetch_cached",
    "fetch_prices",
    "genai_prices",
    "install_fetched",
    "install_override",
    "is_bundled_enabled",
    "load_env_override",
    "parse_models_dev",
    "price_key",
    "pricing_enabled",
    "reprice",
    "resolved",
    "with_prices",
]


GASP = [
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


OPENAPI = [
    "ApiKeyAuth",
    "BasicAuth",
    "BearerAuth",
    "OpenApiAuth",
    "OpenApiConfig",
    "OpenApiError",
    "OpenApiTool",
    "OpenApiToolAdapter",
    "OpenApiToolSource",
    "OperationFilter",
    "SkippedOperation",
    "with_openapi_file",
    "with_openapi_spec",
    "with_openapi_url",
]


TESTING = [
    "FORMAT_VERSION",
    "REDACTED",
    "Cassette",
    "CassetteError",
    "CassetteWriter",
    "Difference",
    "Match",
    "RecordMode",
    "RecordedCall",
    "RecordedTool",
    "RecordingProvider",
    "RecordingTool",
    "ReplayProvider",
    "ReplayingTool",
    "RequestMismatch",
    "TestingError",
    "ToolResultMismatch",
    "UseCassette",
    "first_difference",
    "free_port",
    "fork",
    "fork_point",
    "fork_provider",
    "request_json",
]


DECISION = [
    "Advisor",
    "Answer",
    "BUILT_IN_CHECKS",
    "CalibrationError",
    "CalibrationExample",
    "CalibrationReport",
    "Capabilities",
    "Choice",
    "ChoiceAnswer",
    "DEFAULT_FULL_VIEWS",
    "DecisionBackend",
    "DecisionError",
    "DecisionErrorKind",
    "DecisionModel",
    "Described",
    "Evaluation",
    "FallbackAttempt",
    "GateCheck",
    "GuardCheck",
    "InputGuard",
    "LogprobBackend",
    "MockBackend",
    "Noul",
    "NoulAnswer",
    "OpenAiDecisionBackend",
    "Question",
    "QuestionKind",
    "ReliabilityBin",
    "Request",
    "Score",
    "ScoreAnswer",
    "SpendRecorder",
    "SystemOneBackend",
    "ThresholdPoint",
    "ToolGate",
    "calibrate",
    "distribution_confidence",
    "is_loopback_url",
    "parse_systemone_response",
    "record_decision",
    "recording_decision_spend",
    "with_decision_model",
    "with_input_guard",
    "with_tool_gate",
]


RAY = [
    "AgentFactory",
    "AgentTask",
    "Batch",
    "BatchReport",
    "ErrorKinds",
    "LimitedProvider",
    "LimiterStats",
    "ProgressCallback",
    "ProviderLimit",
    "RateLimiterActor",
    "TaskError",
    "TaskResult",
    "WorkerPool",
    "rate_limiter",
    "run_batch",
]

DBOS = [
    "DATABASE_URL_VARIABLE",
    "DEFAULT_DATABASE_URL",
    "CheckpointError",
    "DatabaseError",
    "DbosError",
    "Decisions",
    "DurableAgent",
    "DurableEvent",
    "DurableRun",
    "DurableRuntime",
    "ProviderLimit",
    "RunNotFoundError",
    "RunNotWaitingError",
    "RunQueue",
    "RunResult",
    "RunStatus",
    "SharedBudget",
    "UnsupportedLoopError",
    "get_run",
    "idempotency_key",
]


UI = [
    "APPROVAL_SCHEMA",
    "AgUiEndpoint",
    "AgentFactory",
    "AiSdkEndpoint",
    "BadRunInputError",
    "DEFAULT_MAX_BODY_BYTES",
    "FRONTEND_REASON",
    "MemoryThreadStore",
    "StoredThread",
    "ThreadStore",
    "UI_MESSAGE_STREAM_HEADERS",
    "UiError",
    "from_agui_messages",
    "from_ui_messages",
    "to_agui_messages",
]

UI_WEB = [
    "DEFAULT_HOST",
    "RUN_SPEND_EVENT",
    "SPEND_EVENT",
    "Hold",
    "Preview",
    "WebApp",
    "WebApprovals",
    "is_loopback",
    "new_token",
    "serve",
    "to_web",
]

A2A = [
    "A2AAgentTool",
    "A2AError",
    "ANSWER_ARTIFACT",
    "AgentFactory",
    "HistoryStore",
    "MemoryHistoryStore",
    "MemoryTaskStore",
    "RemoteAgentError",
    "YoagentExecutor",
    "a2a_app",
    "agent_card",
]

SURFACES = {
    "yoagent.core": CORE,
    "yoagent.core.provider": CORE_PROVIDER,
    "yoagent.core.support": CORE_SUPPORT,
    "yoagent.core.extension": CORE_EXTENSION,
    "yoagent.core.context": CORE_CONTEXT,
    "yoagent.core.loop": CORE_LOOP,
    "yoagent.core.state": CORE_STATE,
    "yoagent.core.session": CORE_SESSION,
    "yoagent.providers": PROVIDERS,
    "yoagent.tools": TOOLS,
    "yoagent.cli": CLI,
    "yoagent.mcp": MCP,
    "yoagent.pricing": PRICING,
    "yoagent.gasp": GASP,
    "yoagent.openapi": OPENAPI,
    "yoagent.testing": TESTING,
    "yoagent.decision": DECISION,
    "yoagent.ray": RAY,
    "yoagent.dbos": DBOS,
    "yoagent.ui": UI,
    "yoagent.ui.web": UI_WEB,
    "yoagent.a2a": A2A,
}


@pytest.mark.parametrize("module_name", sorted(SURFACES))
def test_the_public_names_are_exactly_the_reviewed_ones(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = set(module.__all__)
    pinned = set(SURFACES[module_name])
    assert sorted(exported - pinned) == [], "new public names: review them, then pin them here"
    assert sorted(pinned - exported) == [], "removed public names: a breaking change"
    assert len(module.__all__) == len(exported), "a name is listed twice in __all__"


@pytest.mark.parametrize("module_name", sorted(SURFACES))
def test_no_public_looking_name_is_reachable_outside_all(module_name: str) -> None:
    """httpx's exported-members test: a name without a leading underscore that a module
    holds is in its ``__all__`` (submodules aside), so nothing becomes public unreviewed."""
    module = importlib.import_module(module_name)
    stray = sorted(
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and name not in module.__all__
        and not isinstance(value, types.ModuleType)
    )
    assert stray == [], "reachable but not in __all__: export it or rename it with a _"


@pytest.mark.parametrize("module_name", sorted(SURFACES))
def test_every_public_name_is_importable(module_name: str) -> None:
    module = importlib.import_module(module_name)
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []


def test_the_architecture_contract_is_importable_from_yoagent_core() -> None:
    """ARCHITECTURE.md section 3: the names other code relies on."""
    contract = [
        "Agent",
        "ModelConfig",
        "ApiProtocol",
        "ThinkingLevel",
        "CostConfig",
        "MockProvider",
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "CustomMessage",
        "TextContent",
        "ImageContent",
        "ThinkingContent",
        "ToolCall",
        "Usage",
        "StopReason",
        "AgentTool",
        "ToolContext",
        "ToolResult",
        "ToolError",
        "tool",
        "AgentStart",
        "TurnStart",
        "MessageStart",
        "MessageUpdate",
        "MessageEnd",
        "ToolExecutionStart",
        "ToolExecutionUpdate",
        "ToolExecutionEnd",
        "ProgressMessage",
        "InputRejected",
        "ProviderRetry",
        "TurnEnd",
        "AgentEnd",
        "RunFailedError",
        "ProviderError",
        "ErrorKind",
        "Extension",
        "Budget",
    ]
    core = importlib.import_module("yoagent.core")
    assert [name for name in contract if name not in core.__all__] == []


# Names that left yoagent.core's top level in issue 26 and were documented: each still
# works, warns, and gives the object of its new home.
MOVED_FROM_CORE = {
    "RunHooks": "yoagent.core.extension",
    "Proceed": "yoagent.core.extension",
    "CANCELLED_MARKER": "yoagent.core.extension",
    "compact_messages": "yoagent.core.context",
    "ContextTracker": "yoagent.core.context",
    "agent_loop": "yoagent.core.loop",
    "DEFAULT_MAX_DEPTH": "yoagent.core.loop",
    "SharedStateSink": "yoagent.core.state",
    "TranscriptError": "yoagent.core.provider",
    "classify": "yoagent.core.provider",
}


@pytest.mark.parametrize(("name", "home"), sorted(MOVED_FROM_CORE.items()))
def test_a_documented_name_that_moved_still_works_with_a_deprecation_warning(
    name: str, home: str
) -> None:
    core = importlib.import_module("yoagent.core")
    with pytest.warns(DeprecationWarning, match=rf"yoagent\.core\.{name} moved to {home}"):
        value = getattr(core, name)
    assert value is getattr(importlib.import_module(home), name)
    assert name not in core.__all__
    assert name not in dir(core)


def test_an_undocumented_name_that_left_the_top_level_is_gone() -> None:
    core = importlib.import_module("yoagent.core")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("LazyTypeAdapter", "ToolOutputSink", "MiddlewareLike", "StreamConfig"):
            with pytest.raises(AttributeError):
                getattr(core, name)


def test_the_top_level_of_yoagent_core_stays_near_a_hundred_names() -> None:
    """An application author's list (issue 26): writers of providers, extensions and
    packages have namespaces of their own."""
    core = importlib.import_module("yoagent.core")
    assert len(core.__all__) <= 100
