"""DecisionModel: a backend, the model id to ask for, a time limit, pricing and fallbacks —
the handle everything else takes. Nothing is sent until one is used."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import httpx

from yoagent.core import CostConfig, RetryConfig

from ._answers import ChoiceAnswer, Evaluation, NoulAnswer, ScoreAnswer
from ._backend import DecisionBackend, HttpBackend
from ._errors import DecisionError
from ._evaluate import Member, run_chain, run_one
from ._logprobs import LogprobBackend
from ._openai import OPENAI_HOST, OpenAiDecisionBackend
from ._pricing import FREE, FixedPrice, ListPrice, Pricing
from ._questions import Capabilities, Choice, Noul, Question, Request, Score, Structured
from ._systemone import CLOUDFLARE_HOST, TYPESAFE_HOST, SystemOneBackend

_T = TypeVar("_T")

DEFAULT_TIMEOUT = 30.0
"""Seconds one call may take, retries (and a whole fallback chain) included."""


@dataclass(slots=True, frozen=True)
class DecisionModel:
    """A decision model: ``backend`` asked for ``model``.

    Build one with a preset — :meth:`jev`, :meth:`jev_opencode`, :meth:`jev_opencode_free`,
    :meth:`clef`, :meth:`clef_flash`, :meth:`gpt_6_luna`, :meth:`local`, :meth:`logprobs` —
    or :meth:`from_backend`. Immutable: the ``with_*`` methods return changed copies. Chain
    fallbacks with ``primary | fallback`` (:meth:`with_fallback`).
    """

    backend: DecisionBackend
    model: str
    timeout: float = DEFAULT_TIMEOUT
    """One call's overall limit in seconds, the whole chain's when there are fallbacks."""
    attempt_timeout: float | None = None
    """This member's own limit per attempt, inside the overall one."""
    pricing: Pricing = None
    fallbacks: tuple[DecisionModel, ...] = ()
    """Tried in order after this model fails (flat: a fallback has none of its own)."""

    # --- presets ----------------------------------------------------------------------------

    @classmethod
    def jev(cls) -> DecisionModel:
        """TypeSafe's Jev (``jev-latest``): key from ``TYPESAFE_API_KEY`` and base URL from
        ``TYPESAFE_BASE_URL`` (default ``https://api.typesafe.ai``), read at call time.
        Priced at TypeSafe's list price by the versioned id the API reports, while requests
        go to TypeSafe's host."""
        return cls(
            SystemOneBackend.typesafe(), "jev-latest", pricing=ListPrice("typesafe", TYPESAFE_HOST)
        )

    @classmethod
    def jev_opencode(cls) -> DecisionModel:
        """Jev through OpenCode Zen (``jev-1.13``), key from ``OPENCODE_API_KEY``. Unpriced:
        a gateway's bill is not the vendor's list price."""
        return cls(SystemOneBackend.opencode_zen(), "jev-1.13")

    @classmethod
    def jev_opencode_free(cls) -> DecisionModel:
        """Jev's free tier on OpenCode Zen (``jev-1.13-free``). Unpriced like
        :meth:`jev_opencode`; ``with_cost(CostConfig())`` reports it as $0."""
        return cls(SystemOneBackend.opencode_zen(), "jev-1.13-free")

    @classmethod
    def clef(cls, account_id: str) -> DecisionModel:
        """Cloudflare's Clef on Workers AI, account ``account_id``; the token from
        ``CLOUDFLARE_API_TOKEN``, then ``CLOUDFLARE_AUTH_TOKEN``, at call time. List-priced
        (``cloudflare/clef``) while requests go to ``api.cloudflare.com``."""
        return cls._workers_ai(account_id, "clef")

    @classmethod
    def clef_flash(cls, account_id: str) -> DecisionModel:
        """Cloudflare's Clef Flash (faster, cheaper); otherwise as :meth:`clef`."""
        return cls._workers_ai(account_id, "clef-flash")

    @classmethod
    def _workers_ai(cls, account_id: str, model: str) -> DecisionModel:
        backend = SystemOneBackend.workers_ai(account_id, f"@cf/cloudflare/{model}")
        pricing = ListPrice("cloudflare", CLOUDFLARE_HOST, strip_prefix="@cf/cloudflare/")
        return cls(backend, model, pricing=pricing)

    @classmethod
    def gpt_6_luna(cls) -> DecisionModel:
        """OpenAI's Decisions API (``gpt-6-luna``), key from ``OPENAI_API_KEY`` at call time.
        List-priced (``openai-decisions``) while requests go to ``api.openai.com``."""
        return cls.from_openai_backend(OpenAiDecisionBackend(), "gpt-6-luna")

    @classmethod
    def from_openai_backend(cls, backend: OpenAiDecisionBackend, model: str) -> DecisionModel:
        """An OpenAI Decisions model over a backend you configured (base URL, safety
        identifier), keeping the list price on OpenAI's own host."""
        return cls(backend, model, pricing=ListPrice("openai-decisions", OPENAI_HOST))

    @classmethod
    def local(cls, base_url: str, model: str = "jev-latest") -> DecisionModel:
        """A self-hosted SystemOne server (JevK5, …): no key, local, $0."""
        backend = SystemOneBackend(base_url).with_capabilities(Capabilities(local=True))
        return cls(backend, model, pricing=FREE)

    @classmethod
    def logprobs(cls, base_url: str, model: str) -> DecisionModel:
        """Any OpenAI-compatible ``/chat/completions`` server with logprobs (see
        :class:`LogprobBackend`): no key, $0 on a loopback host, unpriced elsewhere."""
        return cls.from_logprob_backend(LogprobBackend(base_url), model)

    @classmethod
    def from_logprob_backend(cls, backend: LogprobBackend, model: str) -> DecisionModel:
        """A :meth:`logprobs` model over a backend you configured (temperature, limits,
        thinking off), keeping its conveniences: $0 on loopback."""
        return cls(backend, model, pricing=FREE if backend.is_local else None)

    @classmethod
    def from_backend(cls, backend: DecisionBackend, model: str) -> DecisionModel:
        """Any backend asking for ``model``. Unpriced (a cost the backend reports is kept)
        until :meth:`with_cost`."""
        if not isinstance(backend, DecisionBackend):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(
                f"{type(backend).__name__} is not a DecisionBackend: it needs capabilities() "
                "and async evaluate(request)"
            )
        return cls(backend, model)

    # --- builders ---------------------------------------------------------------------------

    def with_model(self, model: str) -> DecisionModel:
        """Ask for this id or alias (pin a version once thresholds are tuned against it)."""
        return replace(self, model=model)

    def with_timeout(self, seconds: float) -> DecisionModel:
        """The overall limit of one call (the whole chain's, with fallbacks)."""
        if not seconds > 0:
            raise ValueError(f"a timeout must be positive, got {seconds}")
        return replace(self, timeout=seconds)

    def with_attempt_timeout(self, seconds: float | None) -> DecisionModel:
        """Limit each attempt of this model, so a slow one leaves time for a fallback."""
        if seconds is not None and not seconds > 0:
            raise ValueError(f"an attempt timeout must be positive, got {seconds}")
        return replace(self, attempt_timeout=seconds)

    def with_cost(self, cost: CostConfig | None) -> DecisionModel:
        """Price every evaluation at ``cost`` (``None``: unpriced)."""
        return replace(self, pricing=None if cost is None else FixedPrice(cost))

    def with_api_key(self, key: str) -> DecisionModel:
        """Send ``key`` instead of reading the preset's variable (for a logprobs model: send
        one at all). Only for the built-in HTTP backends; a custom one owns its key."""
        return replace(self, backend=self._http_backend("with_api_key").with_api_key(key))

    def with_retry(self, retry: RetryConfig) -> DecisionModel:
        """Retry rate limits and transport failures with ``retry`` (built-in HTTP backends)."""
        return replace(self, backend=self._http_backend("with_retry").with_retry(retry))

    def with_client(self, client: httpx.AsyncClient) -> DecisionModel:
        """Send through ``client`` (built-in HTTP backends): its connection pool is reused
        across calls, where by default each call opens its own connection. The client
        belongs to the event loop it is used in; close it yourself."""
        return replace(self, backend=self._http_backend("with_client").with_client(client))

    def _http_backend(self, method: str) -> HttpBackend:
        if not isinstance(self.backend, HttpBackend):
            raise TypeError(
                f"DecisionModel.{method} applies to the built-in HTTP backends; "
                f"{type(self.backend).__name__} owns its own settings"
            )
        return self.backend

    def with_fallback(self, fallback: DecisionModel) -> DecisionModel:
        """Try ``fallback`` (then its own fallbacks) when this model fails. Each member asks
        for its own model id; the overall timeout is this model's."""
        flat = (replace(fallback, fallbacks=()), *fallback.fallbacks)
        return replace(self, fallbacks=(*self.fallbacks, *flat))

    def __or__(self, fallback: DecisionModel) -> DecisionModel:
        """``primary | fallback``: :meth:`with_fallback`."""
        return self.with_fallback(fallback)

    # --- queries ----------------------------------------------------------------------------

    def capabilities(self) -> Capabilities:
        """What the primary backend can answer."""
        return self.backend.capabilities()

    def chain_capabilities(self) -> Capabilities:
        """What every member accepts: a request within it is never skipped by any."""
        capabilities = self.backend.capabilities()
        for fallback in self.fallbacks:
            capabilities = capabilities.strictest(fallback.backend.capabilities())
        return capabilities

    @property
    def fallback_models(self) -> tuple[str, ...]:
        """The fallbacks' model ids, in the order they are tried."""
        return tuple(fallback.model for fallback in self.fallbacks)

    # --- asking -----------------------------------------------------------------------------

    async def evaluate(self, state: Structured, questions: Mapping[str, Question]) -> Evaluation:
        """Ask ``questions`` (by your ids) about ``state`` in one call (split per question
        when the backend does not batch)."""
        return await self.evaluate_request(Request(self.model, state, questions))

    async def evaluate_request(self, request: Request) -> Evaluation:
        """Evaluate a prepared request (its ``model`` is used as is).

        Validates it against the backend's capabilities, applies the timeout, validates
        every answer and prices the result. The spend of every attempt sent is recorded with
        the current recorder (see ``recording_decision_spend``). Raises
        :class:`DecisionError`.
        """
        primary = self._member()
        if not self.fallbacks:
            return await run_one(primary, request, self.timeout)
        members = [primary, *(fallback._member() for fallback in self.fallbacks)]
        return await run_chain(members, request, self.timeout)

    def _member(self) -> Member:
        return Member(self.backend, self.model, self.pricing, self.attempt_timeout)

    async def noul(
        self,
        state: Structured,
        instructions: Structured,
        *,
        if_true: Structured | None = None,
        if_false: Structured | None = None,
    ) -> NoulAnswer:
        """Ask one yes/no question."""
        evaluation = await self.evaluate(state, {"q": Noul(instructions, if_true, if_false)})
        return _only(evaluation.noul("q"))

    async def choice(
        self,
        state: Structured,
        instructions: Structured,
        options: Sequence[str] | Mapping[str, Structured | None],
    ) -> ChoiceAnswer:
        """Pick one of ``options``."""
        evaluation = await self.evaluate(state, {"q": Choice(instructions, options)})
        return _only(evaluation.choice("q"))

    async def score(
        self, state: Structured, instructions: Structured, levels: Sequence[Structured]
    ) -> ScoreAnswer:
        """Rate on ``levels``, lowest first."""
        evaluation = await self.evaluate(state, {"q": Score(instructions, levels)})
        return _only(evaluation.score("q"))


def _only(answer: _T | None) -> _T:
    if answer is None:  # check_complete makes this unreachable; keep the type honest
        raise DecisionError.bad_response("answers.q: missing")
    return answer
