"""The papermill runner's parameter handling, profiles and glue reading."""

from __future__ import annotations

import json

import nbformat
import pytest

from allocbias.book import (
    PARAMETERS_MARKER,
    UnknownParameterError,
    glued_values,
    load_profile,
    notebook_parameters,
    validate_parameters,
)


def _write(tmp_path, cells, name="nb.ipynb"):
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


def _params_cell(source):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = ["parameters"]
    return cell


def test_notebook_parameters_reads_literals(tmp_path):
    path = _write(tmp_path, [_params_cell(f"{PARAMETERS_MARKER}\nseed = 0  # the seed\nname = 'a'\nks = [1, 2]\nx: float = 0.5")])
    assert notebook_parameters(path) == {"seed": 0, "name": "a", "ks": [1, 2], "x": 0.5}


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (f"{PARAMETERS_MARKER}\nseed = 1 + 1", "'seed' .* is not a literal"),
        (f"{PARAMETERS_MARKER}\nimport os", "line 2 .* not a `name = literal`"),
        ("seed = 0", "must start with the line"),
        (f"{PARAMETERS_MARKER}\nseed = (", "not valid Python"),
    ],
)
def test_notebook_parameters_rejects_non_literals(tmp_path, source, message):
    path = _write(tmp_path, [_params_cell(source)])
    with pytest.raises(ValueError, match=message):
        notebook_parameters(path)


def test_exactly_one_parameters_cell(tmp_path):
    none = _write(tmp_path, [nbformat.v4.new_code_cell("x = 1")], "none.ipynb")
    two = _write(tmp_path, [_params_cell(f"{PARAMETERS_MARKER}\nx = 1"), _params_cell(f"{PARAMETERS_MARKER}\ny = 1")], "two.ipynb")
    with pytest.raises(ValueError, match="none.ipynb: expected exactly one cell tagged 'parameters', found 0"):
        notebook_parameters(none)
    with pytest.raises(ValueError, match="found 2"):
        notebook_parameters(two)


def test_validate_parameters_names_unknown_and_wrong_types():
    declared = {"seed": 0, "rate": 0.5, "model": "smollm2", "flag": True, "ks": [1], "path": None}
    validate_parameters(declared, {"seed": 3, "rate": 1, "model": "x", "flag": False, "ks": [1, 2], "path": "a"}, notebook="n")
    with pytest.raises(UnknownParameterError, match="n has no parameters 'a', 'b'"):
        validate_parameters(declared, {"a": 1, "b": 2}, notebook="n")
    with pytest.raises(ValueError, match="parameter 'seed' expects a int"):
        validate_parameters(declared, {"seed": "3"}, notebook="n")
    with pytest.raises(ValueError, match="parameter 'flag' expects a bool"):
        validate_parameters(declared, {"flag": 1}, notebook="n")
    with pytest.raises(ValueError, match="parameter 'seed' expects a int"):
        validate_parameters(declared, {"seed": 2.5}, notebook="n")


def test_load_profile_errors(tmp_path):
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "ok.yaml").write_text("nb_a:\n  seed: 1\nnb_b: {}\n")
    (tmp_path / "profiles" / "bad.yaml").write_text("- 1\n- 2\n")
    assert load_profile("ok", root=tmp_path) == {"nb_a": {"seed": 1}, "nb_b": {}}
    with pytest.raises(ValueError, match=r"unknown profile 'nope'.*known profiles: bad, ok"):
        load_profile("nope", root=tmp_path)
    with pytest.raises(ValueError, match="bad.yaml: expected a mapping"):
        load_profile("bad", root=tmp_path)


def test_glued_values_parses_numbers_and_numpy_reprs(tmp_path):
    def glue_output(name, text):
        return nbformat.v4.new_output(
            "display_data",
            data={"application/papermill.record/text/plain": text},
            metadata={"scrapbook": {"name": name, "mime_prefix": "application/papermill.record/"}},
        )

    cell = nbformat.v4.new_code_cell("glue(...)")
    cell.outputs = [glue_output("a", "0.25"), glue_output("b", "np.float64(0.5)"), glue_output("c", "'text'"),
                    glue_output("d", "<Figure size 640x480 with 1 Axes>")]
    path = _write(tmp_path, [cell])
    values = glued_values(path)
    assert values == {"a": 0.25, "b": 0.5, "c": "text", "d": "<Figure size 640x480 with 1 Axes>"}
    assert json.loads(path.read_text())["cells"][0]["outputs"]


def test_kernels_run_over_ipc_without_the_unencrypted_tcp_warning(tmp_path, capfd):
    """The runner (and so every audit report) starts kernels on local IPC sockets: no open TCP port and no
    "Kernel is running over TCP without encryption" warning printed on every run."""
    import nbformat

    from allocbias.book import PARAMETERS_MARKER, execute_notebook

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(f"{PARAMETERS_MARKER}\nx = 1  # a number", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("print(x * 2)")]
    nbformat.write(nb, tmp_path / "a.ipynb")
    execute_notebook(tmp_path / "a.ipynb", tmp_path / "out.ipynb", {"x": 21})
    out = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert out.cells[-1].outputs[0]["text"] == "42\n"
    captured = capfd.readouterr()
    assert "without encryption" not in captured.err + captured.out


def test_the_readme_table_of_chapters_is_the_books():
    """The README's table of the book is written from _toc.yml (a part per row, chapters numbered as the book
    numbers them): it stopped before chapter 12 and numbered the later chapters one lower than the book once."""
    from allocbias.book import repo_root, toc_chapter_table, toc_chapters

    readme = (repo_root() / "README.md").read_text(encoding="utf-8")
    assert toc_chapter_table() in readme, "README.md's table of chapters differs from _toc.yml; write it with:\n" + (
        toc_chapter_table())
    numbered = [page for page in toc_chapters() if page["number"] is not None]
    # a chapter's file is numbered in reading order: 14_local_law_144 is the book's chapter 14
    assert [int(page["source"].stem[:2]) for page in numbered] == [page["number"] for page in numbered]


def test_toc_chapters_numbers_numbered_parts_on_and_titles_every_page(tmp_path):
    from allocbias.book import toc_chapter_table, toc_chapters

    (tmp_path / "notebooks").mkdir()
    (tmp_path / "book").mkdir()
    for stem, title in [("01_a", "First | one"), ("02_b", "Second")]:
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\nText.")]
        nbformat.write(nb, tmp_path / "notebooks" / f"{stem}.ipynb")
    (tmp_path / "book" / "intro.md").write_text("# Intro\n")
    (tmp_path / "book" / "help.md").write_text("(label)=\n# Help page\n")
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nparts:\n"
        "  - caption: One\n    numbered: true\n    chapters:\n      - file: build/notebooks/01_a\n"
        "  - caption: Two\n    numbered: true\n    chapters:\n      - file: build/notebooks/02_b\n"
        "  - caption: Using\n    chapters:\n      - file: book/help\n")
    pages = toc_chapters(root=tmp_path)
    assert [(p["part"], p["number"], p["title"]) for p in pages] == [
        ("One", 1, "First | one"), ("Two", 2, "Second"), ("Using", None, "Help page")]
    assert toc_chapter_table(root=tmp_path).splitlines()[2:] == [
        "| One | 1 First \\| one |", "| Two | 2 Second |", "| Using | Help page (`book/help.md`) |"]
    (tmp_path / "book" / "help.md").write_text("No heading.\n")
    with pytest.raises(ValueError, match="help.md has no level-one heading"):
        toc_chapters(root=tmp_path)
