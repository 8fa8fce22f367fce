#!/usr/bin/python3
"""scripts/demo says what it shows: every sentence it prints about a job's state or CPUs is checked against
the status table printed under it (scripts/demo-narrate takes both from the same status). Runs the demo's
live part on this build (`--live-only --build-dir`), as the README's demo command runs it after building."""
import os
import re
import subprocess
import unittest

from harness import BUILD

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))


def scenes(out):
    """[(sentence, [table rows as dicts])] for every '--- ' line followed by a status table."""
    lines = out.splitlines()
    found = []
    for i, line in enumerate(lines):
        # The table: a few lines about the RM (policy, sensor, params), then the JOB header and a row per job.
        head = next((k for k in range(i + 1, min(i + 6, len(lines))) if lines[k].lstrip().startswith("JOB ")), None)
        if not line.startswith("--- ") or head is None or any(l.startswith("--- ") for l in lines[i + 1:head]):
            continue
        header = lines[head].split()
        rows = []
        for row in lines[head + 1:]:
            cells = row.split()
            if not cells or not cells[0].isdigit():
                break
            rows.append(dict(zip(header, cells)))
        found.append((line[4:], rows))
    return found


def claims(sentence):
    """{job: {"STATE": state, "ALLOC": cpus}} that the sentence states."""
    out = {}
    for m in re.finditer(r"job (\d+) is (?:already )?([A-Z_]+)(?: \([^)]*\))?(?: with (\d+) CPUs?)?", sentence):
        out.setdefault(m.group(1), {})["STATE"] = m.group(2)
        if m.group(3):
            out[m.group(1)]["ALLOC"] = m.group(3)
    m = re.search(r"job (\d+) is .*? gives it (\d+) CPUs?", sentence)
    if m:
        out.setdefault(m.group(1), {})["ALLOC"] = m.group(2)
    return out


class DemoSaysWhatItShows(unittest.TestCase):
    def test_every_sentence_agrees_with_the_table_under_it(self):
        r = subprocess.run(["bash", os.path.join(ROOT, "scripts/demo"), "--quick", "--live-only", "--build-dir", BUILD],
                           capture_output=True, text=True, timeout=300, cwd=ROOT)
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])
        self.assertNotIn("did not come within", r.stdout)
        shown = scenes(r.stdout)
        self.assertGreaterEqual(len(shown), 3, r.stdout)
        said = [s for s, _ in shown]
        self.assertTrue(any("job 1 is DEC" in s or "PDPA judged it DEC" in s for s in said), said)
        self.assertTrue(any(s.startswith("both run: job 1 is") for s in said), said)
        for sentence, rows in shown:
            by_job = {row["JOB"]: row for row in rows}
            for job, fields in claims(sentence).items():
                self.assertIn(job, by_job, f"'{sentence}': job {job} is not in the table under it")
                for column, value in fields.items():
                    self.assertEqual(by_job[job].get(column), value,
                                     f"'{sentence}' says {column} {value}; the table shows {by_job[job]}")
        self.assertIn("cosched-ctl report 1", r.stdout)
        self.assertRegex(r.stdout, r"job 1 \(.*amdahl-gcc.*\)")


if __name__ == "__main__":
    unittest.main()
