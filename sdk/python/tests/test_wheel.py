"""Installable from a built wheel: `pip wheel` builds it, a fresh venv installs it, and the other
tests run against the installed package (not this source tree)."""
import glob
import os
import subprocess
import sys
import tempfile
import unittest

import cryptography
import jwt

from package_under_test import SDK_FOLDER


@unittest.skipIf(os.environ.get("TESSERA_VERIFICATION_INSTALLED") == "1", "already running from the installed wheel")
class InstalledFromWheel(unittest.TestCase):
    def test_the_wheel_installs_into_a_fresh_venv_and_passes_the_tests(self):
        with tempfile.TemporaryDirectory(prefix="tessera-verification-wheel-") as work:
            wheels = os.path.join(work, "wheels")
            built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", wheels, SDK_FOLDER], capture_output=True, text=True)
            self.assertEqual(built.returncode, 0, f"pip wheel failed (building needs flit_core from the package index or pip's cache):\n{built.stderr}")
            [wheel] = glob.glob(os.path.join(wheels, "tessera_verification-*.whl"))

            venv = os.path.join(work, "venv")
            subprocess.run([sys.executable, "-m", "venv", venv], check=True)
            python = os.path.join(venv, "Scripts" if os.name == "nt" else "bin", "python")
            # PyJWT and cryptography from where this interpreter has them (the system, or a venv of
            # its own, which --system-site-packages would not see), so the test passes offline.
            site_packages = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True, check=True).stdout.strip()
            with open(os.path.join(site_packages, "parent-packages.pth"), "w", encoding="utf-8") as pth:
                pth.write("\n".join(sorted({os.path.dirname(os.path.dirname(module.__file__)) for module in (jwt, cryptography)})) + "\n")
            installed = subprocess.run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", wheel], capture_output=True, text=True)
            self.assertEqual(installed.returncode, 0, installed.stderr)

            location = subprocess.run([python, "-c", "import tessera_verification, sys; print(tessera_verification.__file__)"], capture_output=True, text=True, cwd=work)
            self.assertEqual(location.returncode, 0, location.stderr)
            self.assertTrue(location.stdout.strip().startswith(venv), location.stdout)

            tests = subprocess.run(
                [python, "-m", "unittest", "discover", "-s", os.path.join(SDK_FOLDER, "tests"), "-p", "test_*.py"],
                capture_output=True,
                text=True,
                cwd=work,
                env={**os.environ, "TESSERA_VERIFICATION_INSTALLED": "1"},
            )
            self.assertEqual(tests.returncode, 0, tests.stderr)
            self.assertRegex(tests.stderr, r"Ran \d+ tests")


if __name__ == "__main__":
    unittest.main()
