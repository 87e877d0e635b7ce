"""What each check of the tree (tests/check_*.py) prints: a FAIL line for
each problem, a line saying what was checked, and "NAME: N passed, N
failed", the line tests/run_all.py counts. Returns the exit status."""


def report(name, checked, failures, passed):
    for failure in failures:
        print(f"FAIL {failure}")
    print(f"{name}: {checked}")
    print(f"{name}: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0
