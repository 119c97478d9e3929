"""Importing redlockd where grpcio or protobuf is missing ends in one line that says how to install them."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, os.pardir, "src")
EXAMPLE = os.path.join(HERE, os.pardir, "examples", "lock_example.py")


def import_without(module):
    """Imports redlockd in a fresh interpreter in which `module` cannot be imported; returns (exit code, stderr)."""
    program = f"import sys; sys.modules[{module!r}] = None; import redlockd"
    env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC))
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=60)
    return done.returncode, done.stderr


class MissingRuntimeTest(unittest.TestCase):
    def test_without_grpcio_the_import_names_both_packages_and_how_to_install_them(self):
        code, stderr = import_without("grpc")
        self.assertNotEqual(code, 0)
        last = stderr.strip().splitlines()[-1]
        self.assertEqual(
            last,
            "ModuleNotFoundError: redlockd needs the grpcio and protobuf packages, and grpc is not installed: "
            "apt-get install python3-grpcio python3-protobuf (Debian), or pip install grpcio protobuf",
        )
        self.assertNotIn("During handling", stderr)

    def test_without_protobuf_the_import_says_so_too(self):
        code, stderr = import_without("google.protobuf")
        self.assertNotEqual(code, 0)
        last = stderr.strip().splitlines()[-1]
        self.assertIn("google.protobuf is not installed", last)
        self.assertIn("pip install grpcio protobuf", last)

    def test_the_example_without_grpcio_prints_that_line_alone(self):
        program = f"import runpy, sys; sys.modules['grpc'] = None; sys.argv = [{EXAMPLE!r}]; runpy.run_path({EXAMPLE!r})"
        env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC))
        done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 1)
        self.assertEqual(
            done.stderr,
            "lock_example.py: redlockd needs the grpcio and protobuf packages, and grpc is not installed: "
            "apt-get install python3-grpcio python3-protobuf (Debian), or pip install grpcio protobuf\n",
        )

    def test_with_both_installed_it_imports(self):
        env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC))
        done = subprocess.run([sys.executable, "-c", "import redlockd"], env=env, capture_output=True, text=True,
                              timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)


if __name__ == "__main__":
    unittest.main()
