"""Stand-in for pip's get-pip.py, the script ansible-test runs to put pip
into each virtual environment it creates for a sanity test.

ansible-test downloads get-pip.py from its own file server, which a machine
that reaches only the Python package index cannot. scripts/sanity.sh
downloads pip's wheel from the package index instead and saves it beside
this file in ansible-test's cache, under the name ansible-test looks for
(get_pip_<version>.py). Like get-pip.py, this runs pip straight from the
wheel (a wheel is a zip archive Python can import from) to install the
requested packages (pip==<version>) into the running interpreter. The
get-pip.py options --no-setuptools and --no-wheel are dropped: this pip
installs only what it is asked for.
"""

import glob
import os
import sys


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    wheels = sorted(glob.glob(os.path.join(here, "pip-*-py3-none-any.whl")))
    if not wheels:
        sys.exit("get_pip: no pip wheel beside %s (scripts/sanity.sh downloads it)" % here)
    sys.path.insert(0, wheels[-1])
    from pip._internal.cli.main import main as pip_main  # pylint: disable=import-outside-toplevel

    args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
    sys.exit(pip_main(["install", "--upgrade", "--force-reinstall", "--quiet"] + args))


if __name__ == "__main__":
    main()
