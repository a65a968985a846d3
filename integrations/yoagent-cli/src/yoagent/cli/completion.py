"""Tab completion at the prompt: slash commands, their arguments, and paths.

``/mo`` completes to ``/model``; after ``/model `` the known model ids, after ``/thinking ``
its words, after ``/resume `` and ``/sessions delete `` the saved sessions' ids. Anywhere
else the word under the cursor completes as a path relative to the working folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

ArgumentSource = Callable[[], Iterable[str]]
"""Gives the completions of one command's argument when asked."""

MAX_PATHS = 200


class PromptCompleter(Completer):
    """See the module docstring. ``arguments`` maps a command (``/model``) to where its
    argument's completions come from."""

    def __init__(
        self,
        commands: Iterable[str],
        cwd: Path,
        arguments: dict[str, ArgumentSource] | None = None,
    ) -> None:
        self.commands = list(commands)
        self.cwd = cwd
        self.arguments = arguments or {}

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and " " not in text:
            for name in self.commands:
                if name.startswith(text.lower()):
                    yield Completion(name, start_position=-len(text))
            return
        if text.startswith("/"):
            command, _, argument = text.partition(" ")
            source = self.arguments.get(command.lower())
            if source is not None and " " not in argument:
                for value in source():
                    if value.startswith(argument):
                        yield Completion(value, start_position=-len(argument))
                return
        word = document.get_word_before_cursor(WORD=True)
        if word:
            yield from self._paths(word)

    def _paths(self, word: str) -> Iterable[Completion]:
        head, slash, prefix = os.path.expanduser(word).rpartition("/")
        folder = Path(head or "/") if slash else Path()
        if not folder.is_absolute():
            folder = self.cwd / folder
        try:
            names = sorted(entry.name for entry in os.scandir(folder))
        except (OSError, ValueError):
            return
        shown_folder = word[: len(word) - len(prefix)]
        count = 0
        for name in names:
            if not name.startswith(prefix) or (name.startswith(".") and not prefix.startswith(".")):
                continue
            suffix = "/" if (folder / name).is_dir() else ""
            yield Completion(shown_folder + name + suffix, start_position=-len(word))
            count += 1
            if count >= MAX_PATHS:
                return
