/* NPB-class IS (integer sort), NPB 3 spec section 2.6 (kernel IS).
 *
 * Ranks N integer keys in [0, Bmax) ten times. Keys come from the NPB generator as Bmax/4 times the sum of
 * four uniforms (a bell-shaped distribution). Before each ranking two keys are changed, which shifts the
 * ranks of the five test keys by a known amount: their ranks are checked every iteration ("partial
 * verification", spec 2.6); after the last iteration the keys are sorted by their ranks and the result must
 * be in order ("full verification").
 *
 * Ranking is a bucket sort followed by a count within each bucket, all in one parallel region per iteration
 * (the per-thread bucket counts must be used by the same team that made them).
 */
#include "npb_common.h"
#include "npb_iteration.h"
#include "npb_random.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

enum {
    IS_ITERATIONS = 10, /* MAX_ITERATIONS */
    TEST_KEYS = 5,      /* TEST_ARRAY_SIZE */
};

typedef int32_t is_key;

struct is_class {
    char id;
    int log2_keys, log2_max_key, log2_buckets;
    long test_index[TEST_KEYS]; /* positions of the test keys */
    long test_rank[TEST_KEYS];  /* their ranks before adjustment (spec 2.6, verification table) */
};

static const struct is_class is_classes[] = {
    {'S', 16, 11, 9, {48427, 17148, 23627, 62548, 4431}, {0, 18, 346, 64917, 65463}},
    {'W', 20, 16, 10, {357773, 934767, 875723, 898999, 404505}, {1249, 11698, 1039987, 1043896, 1048018}},
    {'A', 23, 19, 10, {2112377, 662041, 5336171, 3642833, 4250760}, {104, 17523, 123928, 8288932, 8388264}},
};

struct is_state {
    const struct is_class *cls;
    long keys_count, max_key, buckets;
    is_key *keys;         /* the key sequence, modified a little each iteration */
    is_key *bucketed;     /* keys grouped by bucket (key_buff2) */
    long *rank_below;     /* rank_below[k] = number of keys <= k after ranking (key_buff1) */
    long *bucket_start;   /* buckets + 1 offsets into bucketed */
};

/* Key i is (Bmax/4) * (u_{4i} + u_{4i+1} + u_{4i+2} + u_{4i+3}); each thread jumps to its first key. */
static void generate_keys(struct is_state *s)
{
    const double quarter = (double)(s->max_key / 4);
#pragma omp parallel
    {
        const long threads = omp_get_num_threads(), me = omp_get_thread_num();
        const long first = s->keys_count * me / threads, last = s->keys_count * (me + 1) / threads;
        double seed = NPB_DEFAULT_SEED;
        npb_randlc(&seed, npb_power(NPB_MULTIPLIER, 4 * first));
        for (long i = first; i < last; i++) {
            double x = npb_randlc(&seed, NPB_MULTIPLIER);
            x += npb_randlc(&seed, NPB_MULTIPLIER);
            x += npb_randlc(&seed, NPB_MULTIPLIER);
            x += npb_randlc(&seed, NPB_MULTIPLIER);
            s->keys[i] = (is_key)(quarter * x);
        }
    }
}

/* Computes rank_below for the current keys: bucket by high bits, then count within each bucket. */
static void rank_keys(struct is_state *s)
{
    const int shift = s->cls->log2_max_key - s->cls->log2_buckets;
    const long buckets = s->buckets;
    long *counts = NULL; /* [thread][bucket]: keys of my slice in each bucket, then my write cursor */
#pragma omp parallel
    {
        const long threads = omp_get_num_threads(), me = omp_get_thread_num();
        const long first = s->keys_count * me / threads, last = s->keys_count * (me + 1) / threads;
#pragma omp single
        counts = npb_alloc(sizeof(long) * (size_t)(threads * buckets), "IS bucket counts");
        long *mine = counts + me * buckets;
        memset(mine, 0, sizeof(long) * (size_t)buckets);
        for (long i = first; i < last; i++)
            mine[s->keys[i] >> shift]++;
#pragma omp barrier
#pragma omp single
        {
            /* Bucket b of thread t is written after all smaller buckets and after threads < t in b. */
            long offset = 0;
            for (long b = 0; b < buckets; b++) {
                s->bucket_start[b] = offset;
                for (long t = 0; t < threads; t++) {
                    long n = counts[t * buckets + b];
                    counts[t * buckets + b] = offset;
                    offset += n;
                }
            }
            s->bucket_start[buckets] = offset;
        }
        for (long i = first; i < last; i++)
            s->bucketed[mine[s->keys[i] >> shift]++] = s->keys[i];
#pragma omp barrier
        /* Within bucket b, keys lie in [b << shift, (b + 1) << shift): count them and accumulate from the
         * number of keys in lower buckets, which gives rank_below directly. */
#pragma omp for schedule(dynamic)
        for (long b = 0; b < buckets; b++) {
            const long low = b << shift, high = (b + 1) << shift;
            memset(&s->rank_below[low], 0, sizeof(long) * (size_t)(high - low));
            for (long i = s->bucket_start[b]; i < s->bucket_start[b + 1]; i++)
                s->rank_below[s->bucketed[i]]++;
            long running = s->bucket_start[b];
            for (long k = low; k < high; k++) {
                running += s->rank_below[k];
                s->rank_below[k] = running;
            }
        }
    }
    free(counts);
}

/* Expected rank of test key `i` at `iteration`: the spec's per-class adjustment (spec 2.6). */
static long expected_rank(const struct is_class *cls, int i, int iteration)
{
    switch (cls->id) {
    case 'S':
        return i <= 2 ? cls->test_rank[i] + iteration : cls->test_rank[i] - iteration;
    case 'W':
        return i < 2 ? cls->test_rank[i] + (iteration - 2) : cls->test_rank[i] - iteration;
    default: /* 'A' */
        return i <= 2 ? cls->test_rank[i] + (iteration - 1) : cls->test_rank[i] - (iteration - 1);
    }
}

/* One iteration: perturb two keys, rank, check the test keys. Returns the number of test keys that pass. */
static int iteration_step(struct is_state *s, int iteration)
{
    s->keys[iteration] = iteration;
    s->keys[iteration + IS_ITERATIONS] = (is_key)(s->max_key - iteration);
    long test_values[TEST_KEYS];
    for (int i = 0; i < TEST_KEYS; i++)
        test_values[i] = s->keys[s->cls->test_index[i]];

    rank_keys(s);

    int passed = 0;
    for (int i = 0; i < TEST_KEYS; i++) {
        long k = test_values[i];
        if (k <= 0 || k > s->keys_count - 1)
            continue;
        long rank = s->rank_below[k - 1]; /* keys strictly below k */
        if (rank == expected_rank(s->cls, i, iteration))
            passed++;
        else
            printf("  partial verification failed: iteration %d, test key %d (rank %ld, expected %ld)\n",
                   iteration, i, rank, expected_rank(s->cls, i, iteration));
    }
    return passed;
}

/* Memory traffic of one iteration (docs/npb.md, "Memory traffic per iteration"; reads once, writes twice):
 * the count pass reads the N 4-byte keys, the bucketing pass reads them again and writes them to `bucketed`,
 * the ranking pass clears the K 8-byte entries of rank_below (then counts and sums them per bucket while the
 * bucket's range is cached) and reads `bucketed`: 4N + (4N + 2·4N) + (2·8K + 4N). The per-thread bucket
 * counts and the test keys are a few kilobytes. Mirrors rank_keys. */
static uint64_t is_traffic(const struct is_state *s)
{
    const uint64_t keys = sizeof(is_key) * (uint64_t)s->keys_count;
    const uint64_t ranks = sizeof(long) * (uint64_t)s->max_key;
    return keys + (keys + 2 * keys) + (2 * ranks + keys);
}

/* Places every key at its rank and checks the result is sorted (spec 2.6, full verification). */
static bool full_verification(struct is_state *s)
{
    const long buckets = s->buckets;
    long out_of_order = 0;
#pragma omp parallel
    {
        /* Buckets own disjoint ranges of ranks, so each is placed independently. */
#pragma omp for schedule(dynamic)
        for (long b = 0; b < buckets; b++)
            for (long i = s->bucket_start[b]; i < s->bucket_start[b + 1]; i++) {
                is_key key = s->bucketed[i];
                s->keys[--s->rank_below[key]] = key;
            }
#pragma omp for schedule(static) reduction(+ : out_of_order)
        for (long i = 1; i < s->keys_count; i++)
            out_of_order += s->keys[i - 1] > s->keys[i];
    }
    printf("  full verification: %ld keys out of order\n", out_of_order);
    return out_of_order == 0;
}

int main(int argc, char **argv)
{
    static const struct npb_program program = {
        "IS", "bucket sort ranking of integer keys (NPB 3 spec 2.6)",
        "  S  2^16 keys in [0, 2^11)\n  W  2^20 keys in [0, 2^16)\n  A  2^23 keys in [0, 2^19)\n"};
    char class_id;
    int status;
    if (!npb_parse_class(argc, argv, &program, &class_id, &status))
        return status;
    const struct is_class *cls = &is_classes[npb_class_index(class_id)];

    struct is_state s = {.cls = cls};
    s.keys_count = 1L << cls->log2_keys;
    s.max_key = 1L << cls->log2_max_key;
    s.buckets = 1L << cls->log2_buckets;
    s.keys = npb_alloc(sizeof(is_key) * (size_t)s.keys_count, "IS keys");
    s.bucketed = npb_alloc(sizeof(is_key) * (size_t)s.keys_count, "IS bucketed keys");
    s.rank_below = npb_alloc(sizeof(long) * (size_t)s.max_key, "IS ranks");
    s.bucket_start = npb_alloc(sizeof(long) * (size_t)(s.buckets + 1), "IS bucket offsets");
    printf(" NPB-class IS, class %c: %ld keys in [0, %ld), %ld buckets, %d iterations\n", cls->id,
           s.keys_count, s.max_key, s.buckets, IS_ITERATIONS);

    generate_keys(&s);
    iteration_step(&s, 1); /* untimed warm-up, as the spec's driver; it changes the same two keys as iteration 1 */

    const uint64_t traffic = is_traffic(&s);
    npb_print_traffic(traffic);

    int passed = 0;
    double start = npb_seconds();
    for (int it = 1; it <= IS_ITERATIONS; it++) {
        NPB_ITERATION_BEGIN();
        passed += iteration_step(&s, it);
        NPB_ITERATION_END();
        NPB_REPORT_BYTES(traffic);
    }
    double seconds = npb_seconds() - start;

    printf(" Verification (spec 2.6):\n  partial verification: %d of %d test ranks correct\n", passed,
           TEST_KEYS * IS_ITERATIONS);
    bool sorted = full_verification(&s);

    char size[32];
    snprintf(size, sizeof size, "%ld", s.keys_count);
    struct npb_result result = {
        .kernel = "IS",
        .class_id = cls->id,
        .size = size,
        .iterations = IS_ITERATIONS,
        .seconds = seconds,
        .mops = (double)IS_ITERATIONS * s.keys_count / seconds / 1e6,
        .operation = "keys ranked",
        .verified = sorted && passed == TEST_KEYS * IS_ITERATIONS,
    };
    free(s.keys);
    free(s.bucketed);
    free(s.rank_below);
    free(s.bucket_start);
    return npb_report(&result);
}
