"""The package's API is what docs/clients.md says it is, as Node's exports.test.mjs and Go's
api_test.go hold theirs: ``redlockd`` and ``redlockd.aio`` export exactly the lists under
"Python's exports", and every Python name in the names table exists, in sync and asyncio alike,
in the form the table writes it (``lease.valid`` a property, ``lease.keep_alive()`` a method)."""
import inspect
import pathlib
import re
import unittest
from typing import Any, Dict, List, Tuple

import redlockd
import redlockd.aio

DOCS = (pathlib.Path(__file__).resolve().parents[3] / "docs" / "clients.md").read_text(encoding="utf-8")
CODE_SPAN = re.compile(r"`([^`]+)`")

# Each sync class and its asyncio twin: the same names, each in the same form.
TWINS: List[Tuple[type, type]] = [
    (redlockd.LockClient, redlockd.aio.AsyncLockClient),
    (redlockd.Lease, redlockd.aio.AsyncLease),
    (redlockd.Leadership, redlockd.aio.AsyncLeadership),
    (redlockd.LeaderStream, redlockd.aio.AsyncLeaderStream),
    (redlockd.Observation, redlockd.aio.AsyncObservation),
]
# The receivers the table writes before a name, and the classes they stand for.
RECEIVERS = {
    "lease": (redlockd.Lease, redlockd.aio.AsyncLease),
    "leadership": (redlockd.Leadership, redlockd.aio.AsyncLeadership),
}
# Code spans of the table's Python column that are Python keywords or arguments, not names.
NOT_NAMES = {"None", "with", "async with", "async for", "work", "redlockd.aio"}


def paragraph(label: str) -> str:
    start = DOCS.find("\n" + label)
    if start < 0:
        raise AssertionError(f'docs/clients.md has no paragraph starting "{label}"')
    end = DOCS.find("\n\n", start + 1)
    return DOCS[start:end if end >= 0 else None]


def identifiers(text: str) -> List[str]:
    return [span for span in CODE_SPAN.findall(text) if re.fullmatch(r"\w+", span)]


def form(cls: type, name: str) -> str:
    """'property' for a state read, 'method' for a call, '' when ``cls`` has no such name."""
    try:
        attribute = inspect.getattr_static(cls, name)
    except AttributeError:
        return ""
    if isinstance(attribute, property):
        return "property"
    return "method" if callable(attribute) or isinstance(attribute, (staticmethod, classmethod)) else "value"


def public_names(module: Any) -> List[str]:
    """What ``from module import ...`` offers beside its submodules."""
    return sorted(name for name, value in vars(module).items()
                  if not name.startswith("_") and not inspect.ismodule(value))


class ExportsTest(unittest.TestCase):
    def documented(self) -> Dict[str, List[str]]:
        text = paragraph("Python's exports")
        sync, _, aio = text.partition("; `redlockd.aio` exports")
        self.assertTrue(aio, 'the paragraph lists `redlockd`, then "; `redlockd.aio` exports" and its names')
        names = {"redlockd": identifiers(sync.partition("`redlockd` exports")[2]),
                 "redlockd.aio": identifiers(aio)}
        self.assertTrue(names["redlockd"] and names["redlockd.aio"], names)
        return names

    def test_each_module_exports_exactly_what_the_docs_list(self) -> None:
        for module, names in zip((redlockd, redlockd.aio), self.documented().values()):
            with self.subTest(module=module.__name__):
                self.assertEqual(sorted(module.__all__), sorted(names), "__all__ against the docs")
                self.assertEqual(public_names(module), sorted(names), "public names against the docs")

    def test_each_sync_class_and_its_asyncio_twin_have_the_same_names_in_the_same_form(self) -> None:
        for sync, aio in TWINS:
            public = {name for cls in (sync, aio) for name in dir(cls) if not name.startswith("_")}
            with self.subTest(sync=sync.__name__):
                self.assertEqual({name: form(sync, name) for name in public},
                                 {name: form(aio, name) for name in public})


class NamesTableTest(unittest.TestCase):
    def rows(self) -> List[Tuple[str, str]]:
        table = DOCS[DOCS.index("\n| what | Java | Python | Node.js | Go |"):].split("\n")[3:]
        rows = []
        for line in table:
            if not line.startswith("| "):
                break
            cells = line.split(" | ")
            rows.append((cells[0][2:], cells[2]))
        self.assertGreater(len(rows), 10, "the names table has its rows")
        return rows

    def test_every_python_name_exists_in_sync_and_asyncio_in_the_form_the_table_writes(self) -> None:
        exported = set(redlockd.__all__) | set(redlockd.aio.__all__)
        wrong = []
        for row, cell in self.rows():
            for span in CODE_SPAN.findall(cell):
                match = re.match(r"(?:(lease|leadership|redlockd\.aio|redlockd)\.)?([A-Za-z_]\w*)(\()?", span)
                if span in NOT_NAMES or match is None:
                    continue
                receiver, name, call = match.groups()
                want = "method" if call else "property"
                if receiver in ("redlockd", "redlockd.aio"):
                    module = redlockd.aio if receiver == "redlockd.aio" else redlockd
                    if name not in module.__all__ or (call and not callable(getattr(module, name))):
                        wrong.append(f"{span} ({row}): not {want} of {receiver}")
                    continue
                if receiver is None and name in exported:
                    continue
                classes = RECEIVERS[receiver] if receiver else [
                    cls for twin in TWINS for cls in twin if any(form(c, name) for c in twin)]
                forms = {cls.__name__: form(cls, name) for cls in classes}
                if not forms or any(f != want for f in forms.values()):
                    wrong.append(f"{span} ({row}): {want} in the table, {forms or 'nowhere'} in the package")
        self.assertEqual(wrong, [], "names in the table that the package has not, or not in that form")


if __name__ == "__main__":
    unittest.main()
