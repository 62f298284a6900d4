"""Which tessera_verification the tests import: the source tree, or (TESSERA_VERIFICATION_INSTALLED=1)
the one installed in the running interpreter, as test_wheel.py runs them from a built wheel."""
import os
import sys

SDK_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPOSITORY = os.path.dirname(os.path.dirname(SDK_FOLDER))
VECTORS = os.environ.get("TESSERA_VECTORS") or os.path.join(REPOSITORY, "test", "vectors", "verification", "vectors.json")
TEST_KEYS = os.path.dirname(VECTORS)

if os.environ.get("TESSERA_VERIFICATION_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(SDK_FOLDER, "src"))
