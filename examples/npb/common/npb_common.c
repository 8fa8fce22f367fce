/* Command line, clock, allocation, verification checks and report shared by the NPB-class kernels. */
#include "npb_common.h"

#include "npb_iteration.h"

#include <ctype.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NPB_STRINGIFY_(x) #x
#define NPB_STRINGIFY(x) NPB_STRINGIFY_(x)
#if defined(__clang__)
#define NPB_COMPILER                                                                                          \
    "clang " NPB_STRINGIFY(__clang_major__) "." NPB_STRINGIFY(__clang_minor__) "." NPB_STRINGIFY(__clang_patchlevel__)
#elif defined(__GNUC__)
#define NPB_COMPILER "gcc " __VERSION__
#else
#define NPB_COMPILER "unknown compiler"
#endif

static void print_usage(FILE *out, const char *argv0, const struct npb_program *program)
{
    fprintf(out,
            "usage: %s [CLASS | --class CLASS | -c CLASS] [--iterations N] [--help]\n"
            "\n"
            "NPB-class %s: %s\n"
            "\n"
            "Classes (default S):\n%s"
            "\n"
            "--iterations N runs N outer iterations (CG, MG and BT: those with an outer iteration\n"
            "count; the result is then not verified). Threads: OMP_NUM_THREADS.\n"
            "Exit status: 0 verified (or skipped), 1 verification failed, 2 bad arguments.\n",
            argv0, program->name, program->summary, program->class_sizes);
}

static const char npb_classes[] = "SWA"; /* the order of every kernel's class table */

int npb_class_index(char class_id)
{
    const char *at = strchr(npb_classes, class_id);
    return at != NULL && class_id != '\0' ? (int)(at - npb_classes) : 0;
}

static bool class_from_text(const char *text, char *class_id)
{
    if (text == NULL || strlen(text) != 1)
        return false;
    char c = (char)toupper((unsigned char)text[0]);
    if (c == '\0' || strchr(npb_classes, c) == NULL)
        return false;
    *class_id = c;
    return true;
}

bool npb_parse_class(int argc, char **argv, const struct npb_program *program, char *class_id,
                     int *exit_status)
{
    *class_id = 'S';
    bool class_given = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = NULL;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            print_usage(stdout, argv[0], program);
            *exit_status = 0;
            return false;
        }
        if (strcmp(arg, "--iterations") == 0) {
            if (i + 1 >= argc || atoi(argv[i + 1]) < 1) {
                fprintf(stderr, "%s: --iterations needs a positive number (try --help)\n", argv[0]);
                *exit_status = NPB_EXIT_USAGE;
                return false;
            }
            i++;
            continue;
        }
        if (strcmp(arg, "--class") == 0 || strcmp(arg, "-c") == 0)
            value = i + 1 < argc ? argv[++i] : NULL;
        else if (strncmp(arg, "--class=", 8) == 0)
            value = arg + 8;
        else if (arg[0] != '-')
            value = arg;
        else {
            fprintf(stderr, "%s: unknown option '%s' (try --help)\n", argv[0], arg);
            *exit_status = NPB_EXIT_USAGE;
            return false;
        }
        if (class_given || !class_from_text(value, class_id)) {
            fprintf(stderr, "%s: expected one class S, W or A, got '%s' (try --help)\n", argv[0],
                    value ? value : "(nothing)");
            *exit_status = NPB_EXIT_USAGE;
            return false;
        }
        class_given = true;
    }
    return true;
}

int npb_iterations_override(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--iterations") == 0) {
            int n = atoi(argv[i + 1]);
            return n > 0 ? n : 0;
        }
    }
    return 0;
}

double npb_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

void *npb_alloc(size_t bytes, const char *what)
{
    void *p = malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "npb: cannot allocate %zu bytes for %s\n", bytes, what);
        exit(EXIT_FAILURE);
    }
    return p;
}

bool npb_check_relative(const char *what, double value, double reference, double epsilon)
{
    double error = fabs(value - reference) / fabs(reference);
    bool ok = error <= epsilon;
    printf("  %-14s %24.16e  reference %24.16e  rel. error %.3e %s\n", what, value, reference, error,
           ok ? "ok" : "FAILED");
    return ok;
}

void npb_print_traffic(uint64_t bytes_per_iteration)
{
    printf(" Memory traffic  = %llu bytes per iteration (model)\n", (unsigned long long)bytes_per_iteration);
    fflush(stdout); /* a line for whoever reads the output while the kernel runs */
}

int npb_report(const struct npb_result *r)
{
    printf("\n %s Benchmark Completed.\n", r->kernel);
    printf(" Class           = %c\n", r->class_id);
    printf(" Size            = %s\n", r->size);
    printf(" Iterations      = %d\n", r->iterations);
    printf(" Time in seconds = %.4f\n", r->seconds);
    printf(" Max threads     = %d\n", omp_get_max_threads());
    printf(" Mop/s total     = %.2f\n", r->mops);
    printf(" Operation type  = %s\n", r->operation);
    printf(" Build           = %s, %s\n", NPB_COMPILER, NPB_BUILD_VARIANT);
    if (r->skipped) {
        printf(" VERIFICATION SKIPPED (--iterations changed the run)\n");
        fflush(stdout);
        return NPB_EXIT_VERIFIED;
    }
    printf(" VERIFICATION %s\n", r->verified ? "SUCCESSFUL" : "UNSUCCESSFUL");
    fflush(stdout);
    return r->verified ? NPB_EXIT_VERIFIED : NPB_EXIT_UNVERIFIED;
}
