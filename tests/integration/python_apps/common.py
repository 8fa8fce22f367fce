"""What every program here prints last: whether libgomp is in the process (so that the test knows the case
under test, libgomp loaded at import, holds). Under cosched-run libomp is there too, in front of it."""


def libgomp_mapped():
    with open("/proc/self/maps") as f:
        return any("/libgomp.so" in line for line in f)


def report_runtime():
    print(f"libgomp mapped: {libgomp_mapped()}", flush=True)
