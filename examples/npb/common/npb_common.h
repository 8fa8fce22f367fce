/* What every NPB-class kernel shares: command line, wall clock, allocation, verification checks and the
 * result report. Nothing here keeps state between calls. */
#ifndef NPB_COMMON_H
#define NPB_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit statuses shared by all kernels (tests rely on them). */
enum npb_exit_status {
    NPB_EXIT_VERIFIED = 0,
    NPB_EXIT_UNVERIFIED = 1,
    NPB_EXIT_USAGE = 2,
};

/* Describes a kernel for --help. */
struct npb_program {
    const char *name;        /* "CG" */
    const char *summary;     /* one line: what it computes */
    const char *class_sizes; /* one line per class, e.g. "S  n=1400, 15 iterations\n" */
};

/* Reads the problem class from argv: `prog S`, `prog --class S`, `prog --class=S` or `prog -c S` (case
 * insensitive; S when absent). Returns true when the kernel should run with *class_id set to 'S', 'W' or 'A';
 * false when it should exit with *exit_status (0 after --help, NPB_EXIT_USAGE on a bad argument). */
bool npb_parse_class(int argc, char **argv, const struct npb_program *program, char *class_id,
                     int *exit_status);

/* Position of class_id ('S', 'W', 'A') in every kernel's class table, which lists S, W, A in this order. */
int npb_class_index(char class_id);

/* `--iterations N` on the command line: run N outer iterations instead of the class's count (long runs for
 * scheduling experiments; the result cannot be verified then). Returns N, or 0 when absent. A bad N is
 * reported by npb_parse_class. */
int npb_iterations_override(int argc, char **argv);

/* Monotonic wall clock in seconds, for timing the benchmarked section. */
double npb_seconds(void);

/* malloc that reports what it failed to allocate and exits: a kernel cannot do anything useful without it. */
void *npb_alloc(size_t bytes, const char *what);

/* Prints one verification line ("  <what>: computed, reference, relative error") and returns whether
 * |value - reference| / |reference| <= epsilon (the form every NPB verification uses). */
bool npb_check_relative(const char *what, double value, double reference, double epsilon);

/* The memory traffic of one outer iteration by the kernel's model (docs/npb.md, "Memory traffic per
 * iteration"): the bytes its sweeps move between memory and the caches when no array stays cached from one
 * sweep to the next, reads counted once and writes twice (the line is fetched, then written back); data a
 * thread reuses within a sweep (stack buffers, line work arrays, gathered vectors) counts once or, when it
 * stays cached across iterations, not at all. Printed at start: " Memory traffic  = <bytes> bytes per
 * iteration (model)". */
void npb_print_traffic(uint64_t bytes_per_iteration);

/* The result of a run, printed by npb_report. */
struct npb_result {
    const char *kernel;    /* "CG" */
    char class_id;         /* 'S', 'W', 'A' */
    const char *size;      /* problem size as the spec states it, e.g. "64x64x64" */
    int iterations;        /* outer iterations timed */
    double seconds;        /* timed section */
    double mops;           /* millions of operations per second, by the spec's operation count */
    const char *operation; /* "floating point", "random numbers generated", "keys ranked" */
    bool verified;
    bool skipped;          /* --iterations changed the run: no reference value applies */
};

/* Prints the result block and the VERIFICATION SUCCESSFUL/UNSUCCESSFUL/SKIPPED line; returns the exit
 * status (a skipped verification is not a failure). */
int npb_report(const struct npb_result *result);

#endif /* NPB_COMMON_H */
