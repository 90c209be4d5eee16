"""The runner that executes fixture programs reports them as a fresh interpreter would."""

from __future__ import annotations


def _write(folder, name, text):
    path = folder / name
    path.write_text(text)
    return path


def test_each_program_gets_its_own_namespace_cwd_and_argv(tmp_path, program_runner):
    first = _write(tmp_path, "first.py", "import sys\nleft_behind = 1\nsys.x = 1\n")
    second = _write(
        tmp_path,
        "second.py",
        "import os, sys\n"
        "print(__name__, 'left_behind' in globals(), hasattr(sys, 'x'))\n"
        "print(os.getcwd(), sys.argv[1:], sys.path[0])\n",
    )
    work = tmp_path / "work"
    work.mkdir()
    assert program_runner.run(first, cwd=work).returncode == 0
    proc = program_runner.run(second, cwd=work, argv=[str(second), "--flag"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "__main__ False False",
        f"{work} ['--flag'] {tmp_path}",
    ]


def test_exit_codes_tracebacks_and_crashes_are_reported(tmp_path, program_runner):
    cases = {
        "exits.py": ("import sys\nprint('out')\nsys.exit(3)\n", 3),
        "raises.py": ("raise ValueError('boom')\n", 1),
        "crashes.py": (
            "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
            -11,
        ),
        "uses_torch.py": ("import torch\nprint(torch.ones(3).sum().item())\n", 0),
    }
    results = {
        name: program_runner.run(_write(tmp_path, name, text), cwd=tmp_path)
        for name, (text, _) in cases.items()
    }
    assert {n: r.returncode for n, r in results.items()} == {
        n: code for n, (_, code) in cases.items()
    }
    assert results["exits.py"].stdout == "out\n"
    assert "ValueError: boom" in results["raises.py"].stderr
    assert results["uses_torch.py"].stdout == "3.0\n"


def test_programs_cannot_read_the_runner_input(tmp_path, program_runner):
    reads = _write(tmp_path, "reads.py", "import sys\nprint(repr(sys.stdin.read()))\n")
    proc = program_runner.run(reads, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "''\n")


def test_a_program_that_spawns_processes_gets_a_fresh_interpreter(
    tmp_path, program_runner
):
    # Forked children of the runner have torch imported already; `python PROGRAM`
    # does not, and that is what a program calling mp.spawn( gets.
    text = "import sys\nprint('torch' in sys.modules, sys.argv[1:])\n"
    plain = _write(tmp_path, "plain.py", text)
    spawning = _write(tmp_path, "spawning.py", text + "# mp.spawn(worker)\n")
    assert program_runner.run(plain, cwd=tmp_path).stdout == "True []\n"
    proc = program_runner.run(spawning, cwd=tmp_path, argv=[str(spawning), "-x"])
    assert (proc.returncode, proc.stdout) == (0, "False ['-x']\n"), proc.stderr
