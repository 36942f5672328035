"""The extension imports no module of the Python package: the package lends it
what it needs (repr and str of tensors and composites, the SciPy conversion)
through _hurray._register_hooks when it is imported. The extension loaded on
its own still works, with plain fallbacks, and imports nothing of hurray."""
import glob
import os
import subprocess
import sys
import textwrap

import pytest

import hurray
from hurray import _hurray

_ALONE = textwrap.dedent("""
    import array, importlib.util, sys
    spec = importlib.util.spec_from_file_location("hurray._hurray", sys.argv[1])
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    t = m.Tensor(array.array("f", [1, 2, 3]), "float32", (3,))
    assert repr(t) == str(t) == "hurray.Tensor(dtype=float32, shape=(3,))", repr(t)
    assert t._repr_html_() is None     # a notebook falls back to the repr
    try:
        t.to_scipy()
    except RuntimeError as e:
        assert "import hurray" in str(e), e
    else:
        raise SystemExit("to_scipy worked without the package's hook")
    loaded = sorted(k for k in sys.modules if k == "hurray" or k.startswith("hurray."))
    assert loaded == [], loaded
    print("alone ok")
""")


@pytest.mark.slow  # a child interpreter
def test_the_extension_alone_imports_nothing_of_the_package():
    so = glob.glob(os.path.join(os.path.dirname(_hurray.__file__), "_hurray*.so"))
    if not so:
        pytest.skip("the extension is not a .so file here")
    r = subprocess.run([sys.executable, "-c", _ALONE, so[0]], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "alone ok" in r.stdout, r.stdout + r.stderr[-3000:]


def test_the_package_registered_its_hooks():
    np = pytest.importorskip("numpy")
    t = hurray.from_numpy(np.arange(3, dtype=np.float32))
    assert repr(t) == "hurray.Tensor([0., 1., 2.], dtype=float32)"
    assert "0." in str(t)


def test_hooks_are_checked_and_the_first_registration_stays():
    with pytest.raises(TypeError, match="callable"):
        _hurray._register_hooks(tensor_repr=1, tensor_str=repr, composite_repr=repr,
                                to_scipy=repr, as_tensor=repr, file_html=repr,
                                tensor_html=repr)
    with pytest.raises(TypeError):
        _hurray._register_hooks(tensor_repr=repr)  # every hook is required
    _hurray._register_hooks(tensor_repr=lambda t: "other", tensor_str=repr,
                            composite_repr=repr, to_scipy=repr, as_tensor=repr,
                            file_html=repr, tensor_html=lambda t: "other")
    np = pytest.importorskip("numpy")
    assert repr(hurray.from_numpy(np.zeros(1))) != "other"
    assert hurray.from_numpy(np.zeros(1))._repr_html_() != "other"
