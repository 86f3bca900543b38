"""A criterion's verdict for one driver, with the evidence behind it: what was done
(the experiment), what it gave (figures), where its files are (run_dir), or where a
documented claim is stated (source)."""

from dataclasses import asdict, dataclass, field

YES, NO, PARTIAL = "yes", "no", "partial"
NOT_APPLICABLE = "not applicable"
NOT_TESTABLE = "not testable here"
DOCUMENTED = "documented, not verified"
# A criterion whose answer is a value (an architecture, a licence) has that value as its
# verdict instead of one of these.
OUTCOMES = (YES, NO, PARTIAL, NOT_APPLICABLE, NOT_TESTABLE, DOCUMENTED)


@dataclass
class Verdict:
    criterion: str
    driver: str
    verdict: str
    evidence: str  # one or two sentences: how it was found, and the figures that decided
    experiment: str | None = None  # what was run or read, e.g. "pubsub --late-join 2.5 ..."
    figures: dict = field(default_factory=dict)
    run_dir: str | None = None
    source: str | None = None  # a documented claim's address, a file that was read

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, value: dict) -> "Verdict":
        return cls(**{k: value.get(k) for k in cls.__dataclass_fields__} | {
            "figures": value.get("figures") or {}})  # fmt: skip


def with_claim(name: str, driver: str, claim, experiment=None, run_dir=None):
    """verdict(value, evidence, figures=None) for one cell: the manifest's documented
    claim (or None) goes beside the evidence, with its source."""

    def verdict(value: str, evidence: str, figures=None) -> Verdict:
        if claim is not None:
            evidence += f"; documented: {claim.text}"
        return Verdict(name, driver, value, evidence, experiment=experiment,
                       figures=figures or {}, run_dir=run_dir,
                       source=claim.source if claim else None)  # fmt: skip

    return verdict
