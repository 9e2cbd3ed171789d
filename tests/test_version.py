"""``ratercal --version`` (the version read from the installed metadata only when asked) and
``ratercal_cli.__version__``."""

import subprocess
import sys
from importlib.metadata import version

import ratercal_cli


def test_version_is_the_installed_one():
    out = subprocess.run([sys.executable, "-m", "ratercal_cli.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == f"ratercal, version {version('ratercal')}\n"
    assert ratercal_cli.__version__ == version("ratercal") and "__version__" in ratercal_cli.__all__
