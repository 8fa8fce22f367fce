/* ompt_region_counter: a small OMPT tool of the kind profilers are, used as libcosched's client in the
 * tests (test_ompt_client.py). It counts parallel regions and implicit tasks and prints one line at
 * finalize:
 *
 *   region-counter: parallel_begin B parallel_end E data_ok D implicit_begin I implicit_end J threads T get_callback G
 *
 * Like a real profiler it keeps its own state in the OMPT data words: each region's parallel_data gets the
 * region's number at begin and must still hold it at end, each implicit task's task_data its region's
 * number, each thread's thread_data a mark set at thread_begin, read back at each implicit task's begin
 * through ompt_get_thread_data (an entry point found through the lookup it was given), and its tool_data
 * a mark read back at finalize. data_ok counts the words that came back intact: E + 2 J + 1 when nothing
 * was lost. get_callback is 1 when ompt_get_callback, asked at the first region, returned the tool's own
 * parallel_begin function.
 *
 * REGION_COUNTER_DECLINE=1: ompt_start_tool returns NULL (a tool that declines to start).
 */
#include <omp-tools.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define THREAD_MARK 0x7ea1u

static atomic_ulong g_parallel_begin, g_parallel_end, g_data_ok, g_implicit_begin, g_implicit_end, g_threads;
static atomic_ulong g_next_region;
static int g_get_callback_ok;
static atomic_flag g_checked = ATOMIC_FLAG_INIT;
static ompt_get_thread_data_t g_get_thread_data;
static ompt_get_callback_t g_get_callback;

static void on_thread_begin(ompt_thread_t type, ompt_data_t *thread_data) {
  (void)type;
  thread_data->value = THREAD_MARK;
  atomic_fetch_add(&g_threads, 1);
}

static void on_parallel_begin(ompt_data_t *encountering_task, const ompt_frame_t *frame, ompt_data_t *parallel_data,
                              unsigned int requested, int flags, const void *codeptr_ra) {
  (void)encountering_task, (void)frame, (void)requested, (void)flags, (void)codeptr_ra;
  parallel_data->value = atomic_fetch_add(&g_next_region, 1) + 1;
  atomic_fetch_add(&g_parallel_begin, 1);
  if (!atomic_flag_test_and_set(&g_checked)) {
    /* libomp answers ompt_get_callback only once OMPT is on, after the tool's initialize returned */
    ompt_callback_t got = NULL;
    g_get_callback_ok = g_get_callback(ompt_callback_parallel_begin, &got) == 1 && got == (ompt_callback_t)on_parallel_begin;
  }
}

static void on_parallel_end(ompt_data_t *parallel_data, ompt_data_t *encountering_task, int flags,
                            const void *codeptr_ra) {
  (void)encountering_task, (void)flags, (void)codeptr_ra;
  if (parallel_data->value != 0 && parallel_data->value <= atomic_load(&g_next_region)) atomic_fetch_add(&g_data_ok, 1);
  atomic_fetch_add(&g_parallel_end, 1);
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data, ompt_data_t *task_data,
                             unsigned int actual_parallelism, unsigned int index, int flags) {
  (void)actual_parallelism, (void)index;
  if (flags & ompt_task_initial) return;
  if (endpoint == ompt_scope_begin) {
    /* parallel_data is NULL at the end of an implicit task, never at its begin */
    task_data->value = parallel_data != NULL ? parallel_data->value : 0;
    ompt_data_t *thread = g_get_thread_data();
    if (thread != NULL && thread->value == THREAD_MARK) atomic_fetch_add(&g_data_ok, 1);
    atomic_fetch_add(&g_implicit_begin, 1);
    return;
  }
  if (task_data->value != 0) atomic_fetch_add(&g_data_ok, 1);
  atomic_fetch_add(&g_implicit_end, 1);
}

static int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data) {
  (void)initial_device_num;
  tool_data->value = THREAD_MARK;
  ompt_set_callback_t set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
  g_get_callback = (ompt_get_callback_t)lookup("ompt_get_callback");
  g_get_thread_data = (ompt_get_thread_data_t)lookup("ompt_get_thread_data");
  if (set_callback == NULL || g_get_callback == NULL || g_get_thread_data == NULL) return 0;
  set_callback(ompt_callback_thread_begin, (ompt_callback_t)on_thread_begin);
  set_callback(ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin);
  set_callback(ompt_callback_parallel_end, (ompt_callback_t)on_parallel_end);
  set_callback(ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task);
  fprintf(stderr, "region-counter: initialized\n");
  return 1;
}

static void finalize(ompt_data_t *tool_data) {
  unsigned long tool_data_ok = tool_data->value == THREAD_MARK;
  fprintf(stderr,
          "region-counter: parallel_begin %lu parallel_end %lu data_ok %lu implicit_begin %lu implicit_end %lu "
          "threads %lu get_callback %d\n",
          atomic_load(&g_parallel_begin), atomic_load(&g_parallel_end), atomic_load(&g_data_ok) + tool_data_ok,
          atomic_load(&g_implicit_begin), atomic_load(&g_implicit_end), atomic_load(&g_threads), g_get_callback_ok);
  fflush(stderr);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
  (void)omp_version, (void)runtime_version;
  static ompt_start_tool_result_t result = {&initialize, &finalize, {0}};
  const char *decline = getenv("REGION_COUNTER_DECLINE");
  if (decline != NULL && decline[0] == '1') return NULL;
  return &result;
}
