"""One reader of unified diffs (procjudge.diffs) and one path rule, for the core and every importer."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from procjudge import diffs
from procjudge.facts import parse_diff
from procjudge.importers import edits
from procjudge.importers.history import _added_lines
from procjudge.importers.steps import diff_files

# `diff -u` writes each file's time after a tab; a C file's `--i;` and `++i;` start like headers.
TIMESTAMPED = ("--- a/src/count.c\t2024-01-01 00:00:00.000000000 +0000\n"
               "+++ b/src/count.c\t2024-01-01 00:00:01.000000000 +0000\n"
               "@@ -1,4 +1,4 @@\n int counter_value;\n---counter_value;\n+++counter_value;\n return;\n \n")
GIT = ("diff --git a/new.py b/new.py\nnew file mode 100644\nindex 0000000..e69de29\n--- /dev/null\n+++ b/new.py\n"
       "@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n"
       "diff --git a/old name.py b/renamed.py\nsimilarity index 100%\nrename from old name.py\nrename to renamed.py\n"
       "diff --git a/gone.py b/gone.py\ndeleted file mode 100644\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-z = 3\n")


def test_every_reader_names_a_timestamped_file_the_same() -> None:
    assert parse_diff(TIMESTAMPED).files == ("src/count.c",)
    assert diff_files(TIMESTAMPED) == {"src/count.c": "modified"}
    assert set(_added_lines(TIMESTAMPED)) == {"src/count.c"}
    views = edits.Views()
    edits.seed_from_diff(views, TIMESTAMPED)
    assert set(views.lines) == {"src/count.c"}
    assert [e.path for e in edits.diff_edits(edits.Views(), TIMESTAMPED)] == ["src/count.c"]


def test_lines_that_look_like_headers_inside_a_hunk_are_its_lines() -> None:
    (patch,) = diffs.read(TIMESTAMPED)
    assert patch.removed == ["--counter_value;"] and patch.added == ["++counter_value;"]
    (core,) = parse_diff(TIMESTAMPED).per_file
    assert core.removed == ("--counter_value;",) and core.added == ("++counter_value;",)
    assert _added_lines(TIMESTAMPED)["src/count.c"] == {"++counter_value;"}
    found = edits.diff_edits(edits.Views(), TIMESTAMPED)
    assert [(e.removed, e.added, e.line) for e in found] == [(("--counter_value;",), ("++counter_value;",), 2)]
    sql = "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,1 @@\n--- an old comment\n select 1;\n"
    (patch,) = diffs.read(sql)
    assert patch.path == "q.sql" and patch.removed == ["-- an old comment"] and patch.added == []


def test_git_headers_say_created_deleted_and_renamed() -> None:
    assert diff_files(GIT) == {"new.py": "created", "renamed.py": "modified", "gone.py": "deleted"}
    found = {p.path: p for p in diffs.read(GIT)}
    assert found["renamed.py"].old_path == "old name.py" and not found["renamed.py"].hunks
    assert found["gone.py"].removed == ["z = 3"] and found["new.py"].added == ["x = 1", "y = 2"]
    deleted = edits.diff_edits(edits.Views(), GIT)
    assert "/dev/null" not in {e.path for e in deleted}  # a deletion is named by the file it deletes


def test_a_plain_diff_u_is_read_like_a_git_diff() -> None:
    plain = "--- m.py\t2024-01-01\n+++ m.py\t2024-01-02\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    assert diff_files(plain) == {"m.py": "modified"}
    assert diff_files("--- /dev/null\t1970-01-01\n+++ n.py\t2024-01-02\n@@ -0,0 +1 @@\n+b = 1\n") == {"n.py": "created"}
    assert parse_diff("--- /dev/null\t1970-01-01\n+++ n.py\t2024-01-02\n@@ -0,0 +1 @@\n+b = 1\n").per_file[0].created


def test_counts_an_agent_wrote_wrong_are_read_as_far_as_the_lines_go() -> None:
    short = "--- a/m.py\n+++ b/m.py\n@@ -1,1 +1,1 @@\n-a\n+b\n+c\n d\n--- a/n.py\n+++ b/n.py\n@@ -1 +1 @@\n-e\n+f\n"
    first, second = diffs.read(short)
    assert (first.path, first.removed, first.added) == ("m.py", ["a"], ["b", "c"])
    assert (second.path, second.removed, second.added) == ("n.py", ["e"], ["f"])
    long = "--- a/m.py\n+++ b/m.py\n@@ -1,9 +1,9 @@\n-a\n+b\nindex 1..2\n"
    (patch,) = diffs.read(long)
    assert patch.hunks[0].lines == ["-a", "+b"]  # a line that is no body line ends the hunk


def test_a_crlf_diff_keeps_its_blank_context_lines() -> None:
    crlf = "--- a/m.py\r\n+++ b/m.py\r\n@@ -1,3 +1,3 @@\r\n a = 1\r\n\r\n-b = 2\r\n+b = 3\r\n"
    (patch,) = diffs.read(crlf)
    assert patch.path == "m.py" and patch.removed == ["b = 2\r"] and patch.added == ["b = 3\r"]
    views = edits.Views()
    edits.seed_from_diff(views, crlf)
    assert views.lines["m.py"] == {1: "a = 1", 2: "", 3: "b = 2"}


def test_header_paths_follow_one_rule() -> None:
    assert diffs.header_path("+++ b/a b.py\t") == "a b.py"
    assert diffs.header_path('--- "a/caf\\303\\251.py"') == "caf\\303\\251.py"
    assert diffs.header_path("--- /dev/null") == "" and diffs.header_path("+++ plain.py") == "plain.py"


LINES = st.lists(st.text(alphabet="-+ @\\abc;\t", max_size=8), max_size=6)


@settings(max_examples=200, deadline=None)
@given(files=st.lists(st.tuples(st.sampled_from(["m.py", "pkg/a b.c", "t.sql"]), LINES, LINES), min_size=1, max_size=3))
def test_a_well_formed_diff_is_read_back_exactly(files: list[tuple[str, list[str], list[str]]]) -> None:
    """Whatever its lines look like (``--``, ``++``, ``@@``, a backslash), a diff whose counts are
    right gives back the lines it removes and adds, file by file, to the core and the importers."""
    text = ""
    for path, removed, added in files:
        text += f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        text += f"@@ -1,{len(removed) + 1} +1,{len(added) + 1} @@\n ctx\n"
        text += "".join(f"-{line}\n" for line in removed) + "".join(f"+{line}\n" for line in added)
    read = diffs.read(text)
    assert [(p.path, p.removed, p.added) for p in read] == [(p, r, a) for p, r, a in files]
    assert set(diff_files(text)) == {path for path, _, _ in files}


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="-+ @\\\nab,0123:/\tdiff --git", max_size=300))
def test_any_text_is_read_without_an_error(text: str) -> None:
    for patch in diffs.read(text):
        assert isinstance(patch.path, str) and all(h.old_start >= 0 for h in patch.hunks)


def test_the_html_page_draws_header_lookalikes_as_the_lines_they_are() -> None:
    from procjudge.render.html import _diff_lines

    kinds = [(d.kind, d.text) for d in _diff_lines(TIMESTAMPED)]
    assert kinds[:3] == [("head", TIMESTAMPED.split("\n")[0]), ("head", TIMESTAMPED.split("\n")[1]),
                         ("hunk", "@@ -1,4 +1,4 @@")]
    assert ("del", "---counter_value;") in kinds and ("add", "+++counter_value;") in kinds
    assert _diff_lines("@@ -1 +0,0 @@\n--- an old comment\n")[1].kind == "del"


def test_a_file_git_creates_with_no_text_is_a_created_file_of_the_diff() -> None:
    """A binary, empty or link file a diff creates has git's header and no ---/+++ pair."""
    text = ("diff --git a/plot.png b/plot.png\nnew file mode 100644\nindex 0000000..1d2e3f4\n"
            "Binary files /dev/null and b/plot.png differ\n"
            "diff --git a/m.py b/m.py\nindex 1..2 100644\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
            "diff --git a/empty.txt b/empty.txt\nnew file mode 100644\nindex 0000000..e69de29\n"
            "diff --git a/link b/link\nnew file mode 120000\nindex 0000000..945c9b4\n--- /dev/null\n+++ b/link\n"
            "@@ -0,0 +1 @@\n+.\n")
    files = [(f.path, f.created) for f in parse_diff(text).per_file]
    assert sorted(files) == [("empty.txt", True), ("link", True), ("m.py", False), ("plot.png", True)], files


def test_a_hunk_ends_before_the_next_files_git_header() -> None:
    """git's `diff --git`, `new file mode` and `index` lines fall in the previous file's chunk; in its
    last hunk they read as context at the module's level (pylint-6506's exit inside a function read
    as run at import)."""
    text = ("diff --git a/lib/config.py b/lib/config.py\nindex 24e453a..4c10ef9 100644\n--- a/lib/config.py\n"
            "+++ b/lib/config.py\n@@ -40,2 +40,3 @@ def configure(options):\n     if bad:\n+        sys.exit(32)\n"
            "     apply()\ndiff --git a/notes.txt b/notes.txt\nnew file mode 100644\nindex 0000000..4fd4889\n"
            "--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+checked\n")
    config, notes = parse_diff(text).per_file
    assert config.hunks == (("@@ -40,2 +40,3 @@ def configure(options):", "     if bad:", "+        sys.exit(32)",
                             "     apply()"),)
    assert notes.path == "notes.txt" and notes.added == ("checked",)
