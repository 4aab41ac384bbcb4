"""Precision and recall of what the engine asserts on its own: people, organizations and
disagreements, against labels written by reading real documents (``make eval``'s precision part).

Three imports, each read by the engine's eleven stages in this process on a store of its own
(the rows the API serves; the knowledge base's ref is fixed, so the ids are the same every run):

- ``flask`` and ``hatch``: the retrieval sets (``datasets.py``), two documentation folders;
- ``projects``: the people and history files of eight projects as their PyPI sdists ship them
  (:data:`PROJECTS`: READMEs, AUTHORS, THANKS, changelogs, ``PKG-INFO``), pinned by version and
  SHA-256 and unpacked into ``.cache/eval/projects/`` (never committed), with the few files
  under ``labels/constructed/`` written for this evaluation (two notes that do disagree, since
  real documentation rarely does).

The labels (``labels/entities.yaml``, ``labels/disagreements.yaml``; their shape in
:func:`parse_entities` and :func:`parse_disagreements`) name a file and a phrase of it, so the
runner checks every label against the text before anything is scored. An entity label says what a
name in a file is (``person``, ``organization`` or ``neither``); a disagreement label says what a
pair of statements really is (``contradiction``, ``duplicate`` or ``neither``).

Scoring (:func:`score`), per kind (people, organizations, contradictions, duplicates):

- **precision**: of what the engine asserts and a label judges, the share the label agrees with;
  what the engine asserts that no label judges is counted apart (``unlabelled``), never guessed;
- **recall**: of what the labels say is there, the share the engine asserts.

Beside them, each import's ``Disputed`` statements per 10,000 statements.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence, Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from benchmarks.eval import datasets

LABELS = Path(__file__).parent / "labels"
CONSTRUCTED = LABELS / "constructed"
"""Documents written for the evaluation (committed): copied into the ``projects`` import."""
REF = "eval"
KINDS = ("person", "organization", "contradiction", "duplicate", "same")
ENTITY_TYPES = ("person", "organization", "neither")
PAIR_TYPES = ("contradiction", "duplicate", "same", "neither")
TIMED = ("entity_resolution", "dedup_conflict")
"""The stages whose time the report gives: the ones these rules run in."""


@dataclass(frozen=True)
class Sdist:
    """One project's sdist and the files of it the ``projects`` import reads."""

    package: str
    version: str
    sha256: str
    files: tuple[str, ...]

    @property
    def folder(self) -> str:
        return f"{self.package}-{self.version}"

    def as_docset(self) -> datasets.DocSet:
        """The shape ``datasets.download`` fetches and checks."""
        return datasets.DocSet(self.package, self.package, self.version, self.sha256, "", "", "text", False)


PROJECTS: tuple[Sdist, ...] = (
    Sdist("attrs", "24.2.0", "5cfb1b9148b5b086569baec03f20d7b6bf3bcacc9a42bebf87ffaaca362f6346",
          ("README.md", "CHANGELOG.md", "PKG-INFO")),
    Sdist("black", "24.8.0", "2500945420b6784c38b9ee885af039f5e7471ef284ab03fa35ecdde4688cd83f",
          ("AUTHORS.md", "CHANGES.md", "README.md", "PKG-INFO")),
    Sdist("docutils", "0.21.2", "3a6b18732edf182daa3cd12775bbb338cf5691468f91eeeb109deff6ebfa986f",
          ("THANKS.txt", "HISTORY.txt", "RELEASE-NOTES.txt", "README.txt", "PKG-INFO")),
    Sdist("jinja2", "3.1.4", "4a3aee7acbbe7303aede8e9648d13b8bf88a429282aa6122a993f0ac800cb369",
          ("README.md", "PKG-INFO")),
    Sdist("pygments", "2.18.0", "786ff802f32e91311bff3889f6e9a86e81505fe99f2735bb6d60ae0c5004f199",
          ("AUTHORS", "CHANGES", "README.rst", "PKG-INFO")),
    Sdist("python-dateutil", "2.9.0.post0", "37dd54208da7e1cd875388217d5e00ebd4179249f90fb72437e91a35459a0ad3",
          ("AUTHORS.md", "NEWS", "README.rst", "RELEASING", "PKG-INFO")),
    Sdist("requests", "2.32.3", "55365417734eb18255590a9ff9eb97e9e1da868d4ccd6402399eaf68af20a760",
          ("HISTORY.md", "README.md", "PKG-INFO")),
    Sdist("six", "1.16.0", "1e61c37477a1626458e36f7b1d82aa5c9b094fa4802892072e49de9c60c4c926",
          ("CHANGES", "README.rst", "PKG-INFO")),
)  # fmt: skip
"""The ``projects`` import: which files of which pinned sdist (each under ``<package>-<version>/``)."""

IMPORTS = ("flask", "hatch", "projects")


class LabelError(ValueError):
    """A label file that does not hold to its shape, or a label its file does not bear out."""


# -- the documents ------------------------------------------------------------------------------


def ensure_projects(cache: Path = datasets.CACHE) -> Path:
    """The ``projects`` folder: each sdist's files unpacked once (the constructed documents are
    copied in at every run, so an edit to them is read)."""
    root = cache / "projects"
    for sdist in PROJECTS:
        target = root / sdist.folder
        if not (target / datasets.DONE).is_file():
            _unpack(sdist, datasets.download(sdist.as_docset(), cache / "sdists"), target)
    constructed = root / "constructed"
    shutil.rmtree(constructed, ignore_errors=True)
    shutil.copytree(CONSTRUCTED, constructed)
    return root


def _unpack(sdist: Sdist, archive: Path, target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{sdist.folder}-"))
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for name in sdist.files:
                (staging / name).write_bytes(_member(tar, f"{sdist.folder}/{name}", archive.name))
        (staging / datasets.DONE).write_text(f"{archive.name} {sdist.sha256}\n")
        staging.replace(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _member(tar: tarfile.TarFile, name: str, archive: str) -> bytes:
    member = tar.getmember(name)
    source = tar.extractfile(member) if member.isfile() else None
    if source is None:
        raise datasets.FetchError(f"{name} is not a file of {archive}")
    return source.read()


def folder_of(name: str, cache: Path = datasets.CACHE) -> Path:
    """The folder an import reads (fetched the first time)."""
    if name == "projects":
        return ensure_projects(cache)
    return datasets.ensure(datasets.SETS[name], cache)


def read_file(root: Path, relative: str) -> str:
    return (root / relative).read_text(encoding="utf-8", errors="replace")


# -- the labels ---------------------------------------------------------------------------------


def folded(text: str) -> str:
    """Text compared: white space folded, case aside, and the two marks of emphasis and code
    (`````, ``*``) taken out, so a label's phrase reads as the file's text does."""
    return " ".join(text.replace("`", "").replace("*", "").split()).lower()


def fold_name(name: str) -> str:
    """A name compared as the engine compares names (case, dots, white space)."""
    return " ".join(name.replace(".", " ").lower().split())


@dataclass(frozen=True)
class EntityLabel:
    imported: str
    file: str
    name: str
    type: str
    phrase: str
    note: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.imported, self.file, fold_name(self.name))


@dataclass(frozen=True)
class Side:
    file: str
    phrase: str


@dataclass(frozen=True)
class PairLabel:
    imported: str
    a: Side
    b: Side
    type: str
    why: str


def _mapping(entry: Any, fields: set[str], required: set[str], where: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise LabelError(f"{where}: a label is a mapping")
    unknown = set(entry) - fields
    missing = required - set(entry)
    if unknown or missing:
        raise LabelError(f"{where}: unknown fields {sorted(unknown)}, missing {sorted(missing)}")
    for name in required:
        value = entry[name]
        if not isinstance(value, str | dict) or (isinstance(value, str) and not value.strip()):
            raise LabelError(f"{where}: {name} must be non-empty text")
    return entry


def _relative(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise LabelError(f"{where}: file must be non-empty text")
    path = PurePosixPath(value)
    if path.is_absolute() or "\\" in value or any(part in ("..", ".") for part in path.parts):
        raise LabelError(f"{where}: file {value!r} must be a relative path inside the import")
    return value


def _imported(value: Any, where: str) -> str:
    if value not in IMPORTS:
        raise LabelError(f"{where}: import must be one of {', '.join(IMPORTS)}, not {value!r}")
    return str(value)


def parse_exhaustive(data: Any) -> set[tuple[str, str]]:
    """``entities.yaml``'s ``exhaustive``: the ``{import, file}`` read whole, every person and
    organization in them labelled (recall is counted over these files alone)."""
    listed = data.get("exhaustive", []) if isinstance(data, dict) else None
    if not isinstance(listed, list):
        raise LabelError("exhaustive is a list of {import, file}")
    files: set[tuple[str, str]] = set()
    for number, entry in enumerate(listed, 1):
        where = f"exhaustive file {number}"
        if not isinstance(entry, dict) or set(entry) != {"import", "file"}:
            raise LabelError(f"{where}: an exhaustive file is {{import, file}}")
        files.add((_imported(entry["import"], where), _relative(entry["file"], where)))
    return files


def parse_entities(data: Any) -> list[EntityLabel]:
    """``entities.yaml``: a mapping with ``labels``, each ``{import, file, name, type, phrase}``
    (``note`` optional); ``type`` one of :data:`ENTITY_TYPES`; the phrase must hold the name; no
    name labelled twice in a file."""
    if not isinstance(data, dict) or not isinstance(data.get("labels"), list):
        raise LabelError("an entity label file is a mapping with a list of labels")
    labels: list[EntityLabel] = []
    seen: set[tuple[str, str, str]] = set()
    fields = {"import", "file", "name", "type", "phrase", "note"}
    for number, given in enumerate(data["labels"], 1):
        where = f"entity label {number}"
        entry = _mapping(given, fields, fields - {"note"}, where)
        if entry["type"] not in ENTITY_TYPES:
            raise LabelError(f"{where}: type must be one of {', '.join(ENTITY_TYPES)}")
        label = EntityLabel(
            _imported(entry["import"], where),
            _relative(entry["file"], where),
            entry["name"].strip(),
            entry["type"],
            entry["phrase"].strip(),
            str(entry.get("note") or ""),
        )
        if folded(label.name) not in folded(label.phrase):
            raise LabelError(f"{where}: the phrase must hold the name {label.name!r}")
        if label.key in seen:
            raise LabelError(f"{where}: {label.name!r} in {label.file} is labelled twice")
        seen.add(label.key)
        labels.append(label)
    return labels


def _side(value: Any, where: str) -> Side:
    if not isinstance(value, dict) or set(value) != {"file", "phrase"}:
        raise LabelError(f"{where}: a side is {{file, phrase}}")
    phrase = value["phrase"]
    if not isinstance(phrase, str) or len(phrase.split()) < 2:
        raise LabelError(f"{where}: a side's phrase is text of two words or more")
    return Side(_relative(value["file"], where), phrase.strip())


def parse_disagreements(data: Any) -> list[PairLabel]:
    """``disagreements.yaml``: a mapping with ``labels``, each ``{import, a, b, type, why}``; a
    side ``{file, phrase}`` (a phrase of the statement, two words or more); ``type`` one of
    :data:`PAIR_TYPES`; ``why`` what the reader found."""
    if not isinstance(data, dict) or not isinstance(data.get("labels"), list):
        raise LabelError("a disagreement label file is a mapping with a list of labels")
    labels: list[PairLabel] = []
    fields = {"import", "a", "b", "type", "why"}
    for number, given in enumerate(data["labels"], 1):
        where = f"disagreement label {number}"
        entry = _mapping(given, fields, fields, where)
        if entry["type"] not in PAIR_TYPES:
            raise LabelError(f"{where}: type must be one of {', '.join(PAIR_TYPES)}")
        labels.append(
            PairLabel(
                _imported(entry["import"], where),
                _side(entry["a"], where + " a"),
                _side(entry["b"], where + " b"),
                entry["type"],
                entry["why"].strip(),
            )
        )
    return labels


@dataclass(frozen=True)
class Labels:
    entities: list[EntityLabel]
    exhaustive: set[tuple[str, str]]
    pairs: list[PairLabel]


def load_labels(folder: Path = LABELS) -> Labels:
    data = yaml.safe_load((folder / "entities.yaml").read_text(encoding="utf-8"))
    pairs = parse_disagreements(yaml.safe_load((folder / "disagreements.yaml").read_text(encoding="utf-8")))
    return Labels(parse_entities(data), parse_exhaustive(data), pairs)


def check_against(entities: list[EntityLabel], pairs: list[PairLabel], roots: dict[str, Path]) -> None:
    """Every label's file exists in its import and holds its phrase (white space folded, case and
    the marks of emphasis aside); every label that does not is named in the error."""
    texts: dict[tuple[str, str], str] = {}
    wrong: list[str] = []

    def holds(imported: str, file: str, phrase: str, where: str) -> None:
        if (imported, file) not in texts:
            path = roots[imported] / file
            texts[imported, file] = folded(read_file(roots[imported], file)) if path.is_file() else ""
        if not texts[imported, file]:
            wrong.append(f"{where}: {imported}/{file} is no file of the import")
        elif folded(phrase) not in texts[imported, file]:
            wrong.append(f"{where}: {imported}/{file} does not say {phrase!r}")

    for label in entities:
        if label.imported in roots:
            holds(label.imported, label.file, label.phrase, f"entity {label.name!r}")
    for pair in pairs:
        if pair.imported in roots:
            for side in (pair.a, pair.b):
                holds(pair.imported, side.file, side.phrase, f"pair {pair.why[:40]!r}")
    if wrong:
        raise LabelError(f"{len(wrong)} labels are not what their files say:\n" + "\n".join(wrong))


# -- what the engine asserts --------------------------------------------------------------------


@dataclass
class Found:
    """What the engine asserted on one import."""

    entities: dict[tuple[str, str, str], str] = field(default_factory=dict)
    """(import, file, folded name) -> the type of the entity the mention counts for."""
    names: dict[tuple[str, str, str], str] = field(default_factory=dict)
    """The same keys -> the name as written."""
    pairs: list[tuple[str, tuple[str, str], tuple[str, str]]] = field(default_factory=list)
    """(type, (file, statement), (file, statement)) of every two-sided disagreement, and of every
    statement merged with another file's (type ``same``: its sides the statement and the other
    file's words): both say "these two say the same", so both count as duplicates."""
    copies: int = 0
    statements: int = 0
    disputed: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


def ingest(imported: str, root: Path) -> Found:
    """The folder read by the engine's stages in this process; what it asserted, and each stage's time."""
    from local_engine.ingestion import pipeline  # the engine: imported when an import is read
    from local_engine.store.database import Store

    store = Store(None, threading.RLock())
    work = pipeline.Work(job_id="job_eval", ref=REF, kind="paths", inputs=[str(root)], force=True)
    seconds: dict[str, float] = {}
    try:
        for name, stage in pipeline.STAGE_WORK.items():
            started = time.perf_counter()
            stage(store, work)
            seconds[name] = time.perf_counter() - started
        found = asserted(store, imported, root.name)
    finally:
        store.close()
    found.seconds = seconds
    return found


def _file(source_name: str, folder: str) -> str:
    return source_name.removeprefix(folder + "/")


def asserted(store: Any, imported: str, folder: str) -> Found:
    found = Found()
    for row in store.rows(
        "SELECT m.text, s.name AS source, COALESCE(k.type, e.type) AS type FROM mentions m"
        " JOIN entities e USING (entity_id) JOIN sources s ON s.source_id = m.source_id"
        " LEFT JOIN entities k ON k.entity_id = e.merged_into WHERE m.ref = ?",
        REF,
    ):
        key = (imported, _file(row["source"], folder), fold_name(row["text"]))
        found.entities.setdefault(key, str(row["type"]))
        found.names.setdefault(key, str(row["text"]))
    sides: dict[str, list[tuple[str, str]]] = {}
    for row in store.rows(
        "SELECT cs.conflict_id, st.statement, s.name AS source FROM conflict_sides cs"
        " JOIN statements st USING (knowledge_id) JOIN sources s ON s.source_id = st.source_id"
        " JOIN conflicts c ON c.conflict_id = cs.conflict_id WHERE c.ref = ? ORDER BY cs.conflict_id, cs.position",
        REF,
    ):
        sides.setdefault(row["conflict_id"], []).append((_file(row["source"], folder), str(row["statement"])))
    for row in store.rows("SELECT conflict_id, type FROM conflicts WHERE ref = ?", REF):
        held = sides.get(row["conflict_id"], [])
        if len({file for file, _ in held}) == 2 and len(held) == 2:
            found.pairs.append((str(row["type"]), held[0], held[1]))
        else:
            found.copies += 1  # a copy's sides are the original's first statements: no pair to judge
    for row in store.rows(  # the same statement in two files: one statement, the other file's words its evidence
        "SELECT st.statement, s.name AS source, o.name AS other, substr(o.text, e.char_start + 1,"
        " e.char_end - e.char_start) AS excerpt FROM evidence e JOIN statements st USING (knowledge_id)"
        " JOIN sources s ON s.source_id = st.source_id JOIN sources o ON o.source_id = e.source_id"
        " WHERE st.ref = ? AND e.source_id != st.source_id",
        REF,
    ):
        kept = (_file(row["source"], folder), str(row["statement"]))
        found.pairs.append(("same", kept, (_file(row["other"], folder), str(row["excerpt"]))))
    found.statements = int(store.value("SELECT COUNT(*) FROM statements WHERE ref = ?", REF) or 0)
    found.disputed = int(store.value("SELECT COUNT(*) FROM statements WHERE ref = ? AND status = 'Disputed'", REF) or 0)
    return found


# -- scoring ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    """One kind's figures: what was asserted and judged, how much of it was right, what the
    labels hold and how much of that was found, and what was asserted with no label."""

    asserted: int
    correct: int
    relevant: int
    found: int
    unlabelled: int

    @property
    def precision(self) -> float | None:
        return self.correct / self.asserted if self.asserted else None

    @property
    def recall(self) -> float | None:
        return self.found / self.relevant if self.relevant else None


def score(asserted: Iterable[Any], truth: dict[Any, str], kind: str, recall_over: set[Any] | None = None) -> Score:
    """``asserted``: the keys the engine asserts are ``kind``; ``truth``: every labelled key and
    what it really is. Precision over the asserted keys a label judges; recall over the keys
    labelled ``kind`` (of ``recall_over`` only, when given: the keys of files read whole)."""
    claimed = set(asserted)
    judged = {key for key in claimed if key in truth}
    relevant = {key for key, real in truth.items() if real == kind and (recall_over is None or key in recall_over)}
    return Score(
        asserted=len(judged),
        correct=sum(truth[key] == kind for key in judged),
        relevant=len(relevant),
        found=len(relevant & claimed),
        unlabelled=len(claimed - judged),
    )


def _holds(phrase: str, statement: str) -> bool:
    return folded(phrase) in folded(statement)


def pair_key(label: PairLabel, pair: tuple[str, tuple[str, str], tuple[str, str]]) -> bool:
    """Whether a disagreement the engine found is the labelled pair: each side's file and phrase
    are one of its two sides', either way round."""
    _, first, second = pair

    def same(side: Side, held: tuple[str, str]) -> bool:
        return side.file == held[0] and _holds(side.phrase, held[1])

    return (same(label.a, first) and same(label.b, second)) or (same(label.a, second) and same(label.b, first))


def judged_pairs(labels: Sequence[PairLabel], found: Sequence[tuple[str, tuple[str, str], tuple[str, str]]]
                 ) -> tuple[dict[str, set[int]], dict[int, str]]:  # fmt: skip
    """(engine type -> the labels its disagreements are, label index -> what it really is); an
    engine disagreement no label names is the label index ``-1 - n`` (``n`` its place), so it
    counts as unlabelled."""
    truth = {index: label.type for index, label in enumerate(labels)}
    claimed: dict[str, set[int]] = {kind: set() for kind in ("contradiction", "duplicate", "same")}
    for number, pair in enumerate(found):
        matches = [index for index, label in enumerate(labels) if pair_key(label, pair)]
        claimed.setdefault(pair[0], set()).update(matches or [-1 - number])
    return claimed, truth


def scores(
    entities: Sequence[EntityLabel],
    pairs: Sequence[PairLabel],
    found: Found,
    exhaustive: AbstractSet[tuple[str, str]] = frozenset(),
) -> dict[str, Score]:
    """Each kind's scores on one import's labels (people's and organizations' recall over the
    files read whole)."""
    truth = {label.key: label.type for label in entities}
    whole = {label.key for label in entities if (label.imported, label.file) in exhaustive}
    result = {
        kind: score((key for key, typed in found.entities.items() if typed == kind), truth, kind, whole)
        for kind in ("person", "organization")
    }
    claimed, pair_truth = judged_pairs(pairs, found.pairs)
    for kind in ("contradiction", "duplicate", "same"):
        result[kind] = score(claimed.get(kind, set()), pair_truth, kind)
    return result


def combined(parts: Iterable[Score]) -> Score:
    totals = [0, 0, 0, 0, 0]
    for part in parts:
        for index, value in enumerate((part.asserted, part.correct, part.relevant, part.found, part.unlabelled)):
            totals[index] += value
    return Score(*totals)


def per_10k(disputed: int, statements: int) -> float:
    return 10_000 * disputed / statements if statements else 0.0


# -- the report ---------------------------------------------------------------------------------

PLURAL = {"person": "people", "organization": "organizations", "contradiction": "contradictions",
          "duplicate": "duplicates", "same": "the same statement (merged)"}  # fmt: skip


def _figure(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def markdown_table(rows: Sequence[tuple[str, Score]]) -> str:
    """``(what, score)`` rows: precision with its counts, recall with its counts, unlabelled."""
    lines = [
        "| what | precision | right / judged | recall | found / labelled | unlabelled |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for what, s in rows:
        lines.append(
            f"| {what} | {_figure(s.precision)} | {s.correct} / {s.asserted} | {_figure(s.recall)} "
            f"| {s.found} / {s.relevant} | {s.unlabelled} |"
        )
    return "\n".join(lines)


def unlabelled(entities: Sequence[EntityLabel], pairs: Sequence[PairLabel], found: Found) -> list[str]:
    """What the engine asserted that no label judges, one line each (to label next)."""
    labelled = {label.key for label in entities}
    lines = [
        f"entity\t{key[0]}\t{key[1]}\t{found.names[key]}\t{typed}"
        for key, typed in sorted(found.entities.items())
        if key not in labelled and typed in ("person", "organization")
    ]
    for pair in found.pairs:
        if not any(pair_key(label, pair) for label in pairs):
            sides = [" ".join(part.split()) for part in (*pair[1], *pair[2])]
            lines.append("\t".join(("pair", pair[0], *sides)))
    return lines


def evaluate(names: Sequence[str], cache: Path = datasets.CACHE) -> dict[str, Any]:
    """Every import read, its labels checked against its files, and scored."""
    labels = load_labels()
    roots = {name: folder_of(name, cache) for name in names}
    check_against(labels.entities, labels.pairs, roots)
    result: dict[str, Any] = {}
    for name in names:
        found = ingest(name, roots[name])
        mine_e = [label for label in labels.entities if label.imported == name]
        mine_p = [label for label in labels.pairs if label.imported == name]
        result[name] = {
            "found": found,
            "scores": scores(mine_e, mine_p, found, labels.exhaustive),
            "unlabelled": unlabelled(mine_e, mine_p, found),
            "files": sum(1 for path in roots[name].rglob("*") if path.is_file() and path.name != datasets.DONE),
        }
    return result


def as_json(result: dict[str, Any]) -> dict[str, Any]:
    """What :func:`report` prints, as data (``--json``)."""
    return {
        name: {
            "files": part["files"],
            "statements": part["found"].statements,
            "disputed": part["found"].disputed,
            "disputed_per_10k": round(per_10k(part["found"].disputed, part["found"].statements), 1),
            "copies": part["found"].copies,
            "seconds": {stage: round(value, 3) for stage, value in part["found"].seconds.items()},
            "scores": {kind: vars(score) for kind, score in part["scores"].items()},
            "unlabelled": part["unlabelled"],
        }
        for name, part in result.items()
    }


def report(result: dict[str, Any]) -> str:
    """The precision table over every import, then each import's ``Disputed`` count and stage times."""
    rows = [(PLURAL[kind], combined(part["scores"][kind] for part in result.values())) for kind in KINDS]
    lines = ["### Precision: people, organizations and disagreements (labelled)", "", markdown_table(rows), ""]
    lines += ["| import | files | statements | `Disputed` | per 10,000 | entity_resolution | dedup_conflict |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for name, part in result.items():
        found: Found = part["found"]
        lines.append(
            f"| {name} | {part['files']} | {found.statements} | {found.disputed} "
            f"| {per_10k(found.disputed, found.statements):.1f} | {found.seconds.get(TIMED[0], 0):.2f} s "
            f"| {found.seconds.get(TIMED[1], 0):.2f} s |"
        )
    lines += ["", "Per import:", ""]
    for name, part in result.items():
        lines.append(markdown_table([(f"{name}: {PLURAL[kind]}", part["scores"][kind]) for kind in KINDS]))
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
