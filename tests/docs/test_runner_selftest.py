"""The Markdown runner catches what it must: a broken Python, shell or C block
fails naming the page and the line; markers are checked. Without these, the
guide tests could pass on pages that do not work."""
import textwrap

import pytest

import mdcode


def unit_of(tmp_path, text, name="page.md"):
    page = tmp_path / name
    page.write_text(textwrap.dedent(text))
    return mdcode.page_unit(page, root=tmp_path)


def test_a_good_page_runs_in_order_in_one_namespace(tmp_path):
    unit = unit_of(tmp_path, """\
        # Page
        ```python
        x = 41
        ```
        ```sh
        echo hello > out.txt
        ```
        ```python
        assert x + 1 == 42 and open("out.txt").read() == "hello\\n"
        ```
        """)
    work = tmp_path / "work"
    work.mkdir()
    assert mdcode.run_unit(unit, work) == 3


def test_a_failing_python_block_names_the_page_and_line(tmp_path):
    unit = unit_of(tmp_path, """\
        # Page

        ```python
        a = 1
        b = a / 0
        ```
        """)
    with pytest.raises(mdcode.PageError, match=r"^page\.md:5: ZeroDivisionError"):
        mdcode.run_unit(unit, tmp_path)


def test_a_session_block_must_show_what_it_gives(tmp_path):
    # a block of >>> prompts runs as a doctest in the page's namespace: the
    # output shown must be the output given
    good = unit_of(tmp_path, """\
        ```python
        y = [1, 2]
        ```
        ```python
        >>> y + [3]
        [1, 2, 3]
        >>> print("a   b")
        a b
        >>> z = 5
        ```
        ```python
        assert z == 5
        ```
        """, "good.md")
    assert mdcode.run_unit(good, tmp_path) == 3
    bad = unit_of(tmp_path, """\
        ```python
        >>> 1 + 1
        3
        ```
        """, "bad.md")
    with pytest.raises(mdcode.PageError, match=r"^bad\.md:2: the session does not give"):
        mdcode.run_unit(bad, tmp_path)


def test_an_error_inside_a_called_function_still_names_the_page_line(tmp_path):
    unit = unit_of(tmp_path, """\
        ```python
        def f():
            raise ValueError("boom")
        ```
        text
        ```python
        f()
        ```
        """)
    with pytest.raises(mdcode.PageError, match=r"^page\.md:3: ValueError: boom"):
        mdcode.run_unit(unit, tmp_path)


def test_a_failing_shell_block_fails(tmp_path):
    unit = unit_of(tmp_path, """\
        ```sh
        true
        false
        echo not reached
        ```
        """)
    with pytest.raises(mdcode.PageError, match=r"^page\.md:2: the commands exited with status 1"):
        mdcode.run_unit(unit, tmp_path)


def test_an_expected_exit_status(tmp_path):
    good = unit_of(tmp_path, "<!-- guide: exit 3 -->\n```sh\nexit 3\n```\n")
    assert mdcode.run_unit(good, tmp_path) == 1
    bad = unit_of(tmp_path, "<!-- guide: exit 3 -->\n```sh\nexit 0\n```\n")
    with pytest.raises(mdcode.PageError, match="status 0, not 3"):
        mdcode.run_unit(bad, tmp_path)


def test_skip_needs_a_reason_and_unknown_markers_fail(tmp_path):
    with pytest.raises(mdcode.PageError, match="needs a reason"):
        unit_of(tmp_path, "<!-- guide: skip -->\n```python\n1/0\n```\n")
    with pytest.raises(mdcode.PageError, match="unknown marker"):
        unit_of(tmp_path, "<!-- guide: skipp because -->\n```python\n1/0\n```\n")
    unit = unit_of(tmp_path, "<!-- guide: skip it installs software -->\n```python\n1/0\n```\n")
    assert mdcode.run_unit(unit, tmp_path) == 0


def test_needs_names_the_missing_module(tmp_path):
    unit = unit_of(tmp_path, "<!-- guide: needs os, no_such_module_xyz -->\n```python\n```\n")
    assert mdcode.missing_modules(unit) == ["no_such_module_xyz"]


def test_snippets_are_expanded_from_the_root(tmp_path):
    (tmp_path / "ex.py").write_text("y = 6 * 7\n")
    unit = unit_of(tmp_path, '```python\n--8<-- "ex.py"\n```\n```python\nassert y == 42\n```\n')
    assert mdcode.run_unit(unit, tmp_path) == 2
    with pytest.raises(mdcode.PageError, match="not found"):
        unit_of(tmp_path, '```python\n--8<-- "nope.py"\n```\n')


needs_lib = pytest.mark.skipif(mdcode.c_library() is None, reason="build/libhurray.a not built")


@needs_lib
def test_c_blocks_compile_run_and_fail(tmp_path):
    lib = mdcode.c_library()
    ok = unit_of(tmp_path, """\
        ```c
        #include <hurray/hurray.h>
        int main(void) { return hurray_c_abi_version() == HURRAY_C_ABI_VERSION ? 0 : 1; }
        ```
        """)
    assert mdcode.run_unit(ok, tmp_path, lib) == 1
    broken = unit_of(tmp_path, "```c\nint main(void) { return undefined_thing; }\n```\n")
    with pytest.raises(mdcode.PageError, match=r"^page\.md:2: the C example does not compile"):
        mdcode.run_unit(broken, tmp_path, lib)
    failing = unit_of(tmp_path, "```c\nint main(void) { return 3; }\n```\n")
    with pytest.raises(mdcode.PageError, match="exited with status 3"):
        mdcode.run_unit(failing, tmp_path, lib)
    fragment = unit_of(tmp_path, "```c\nint x = 1;\n```\n")
    with pytest.raises(mdcode.PageError, match="whole program"):
        mdcode.run_unit(fragment, tmp_path, lib)


@needs_lib
def test_a_python_extension_block_is_importable_afterwards(tmp_path):
    unit = unit_of(tmp_path, """\
        <!-- guide: python-extension selftest_ext -->
        ```c
        #define PY_SSIZE_T_CLEAN
        #include <Python.h>
        static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, .m_name = "selftest_ext"};
        PyMODINIT_FUNC PyInit_selftest_ext(void) { return PyModuleDef_Init(&def); }
        ```
        ```python
        import selftest_ext
        assert selftest_ext.__name__ == "selftest_ext"
        ```
        """)
    assert mdcode.run_unit(unit, tmp_path, mdcode.c_library()) == 2


def test_a_quoted_excerpt_is_checked_against_its_file_not_run(tmp_path):
    # an excerpt of an example program (which the C suite builds and runs) is
    # not a program: it is not run, but it must still be in the file, verbatim
    lines = (mdcode.ROOT / "examples" / "c" / "quickstart.c").read_text().split("\n")
    i = next(n for n, ln in enumerate(lines) if "hurray_descriptor_destroy" in ln)
    excerpt = "\n".join(lines[i - 1:i + 1])

    def page(code):
        return "# Page\n\n<!-- quote: examples/c/quickstart.c -->\n```c\n" + code + "\n```\n"

    good = unit_of(tmp_path, page(excerpt))
    assert [b.marks for b in good.blocks] == [{"quote": "examples/c/quickstart.c"}]
    assert mdcode.run_unit(good, tmp_path) == 0
    bad = unit_of(tmp_path, page(excerpt + "\n  /* a line the file does not have */"))
    with pytest.raises(mdcode.PageError, match=r"^page\.md:5: the excerpt of examples/c/quickstart\.c"):
        mdcode.run_unit(bad, tmp_path)
