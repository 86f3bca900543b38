"""argparse with what a newcomer needs when a word is mistyped: the closest valid word
("did you mean 'ping'?") after an invalid choice or an unknown option, and the usage of
the subcommand that was meant, not the top level's."""

import argparse
import difflib
import re
import sys

_CHOICE = re.compile(r"invalid choice: '(?P<word>[^']*)' \(choose from (?P<choices>.*)\)")


def closest(word: str, candidates) -> str | None:
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


class Parser(argparse.ArgumentParser):
    def error(self, message: str):
        match = _CHOICE.search(message)
        if match:
            choices = re.findall(r"'([^']*)'", match["choices"])
            guess = closest(match["word"], choices)
            if guess:
                message += f"; did you mean {guess!r}?"
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")

    def unknown_options(self, extras: list[str]):
        """Reports arguments this (sub)command does not take, with the nearest option."""
        options = [s for action in self._actions for s in action.option_strings]
        hints = []
        for extra in extras:
            guess = closest(extra.split("=", 1)[0], options) if extra.startswith("-") else None
            if guess:
                hints.append(f"{extra}: did you mean {guess}?")
        self.error(
            f"unrecognized arguments: {' '.join(extras)}"
            + (f" ({'; '.join(hints)})" if hints else "")
        )
