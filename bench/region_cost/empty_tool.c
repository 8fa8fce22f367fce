/* An OMPT tool that registers the seven callbacks libcosched registers and does nothing in them: what any such
 * tool costs libomp per region (its OMPT dispatch), the floor under libcosched's own cost. Loaded with
 * OMP_TOOL_LIBRARIES by bench/region_cost/run.py; not part of cosched. */
#include <omp-tools.h>
#include <stddef.h>
#include <stdint.h>

static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *parallel,
                              unsigned int requested, int flags, const void *codeptr) {
  (void)task, (void)frame, (void)parallel, (void)requested, (void)flags, (void)codeptr;
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel, ompt_data_t *task,
                             unsigned int actual, unsigned int index, int flags) {
  (void)endpoint, (void)parallel, (void)task, (void)actual, (void)index, (void)flags;
}

static void on_thread_begin(ompt_thread_t type, ompt_data_t *thread) { (void)type, (void)thread; }

static void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t *parallel,
                                ompt_data_t *task, const void *codeptr) {
  (void)kind, (void)endpoint, (void)parallel, (void)task, (void)codeptr;
}

static void on_task_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next) {
  (void)prior, (void)status, (void)next;
}

static void on_work(ompt_work_t type, ompt_scope_endpoint_t endpoint, ompt_data_t *parallel, ompt_data_t *task,
                    uint64_t count, const void *codeptr) {
  (void)type, (void)endpoint, (void)parallel, (void)task, (void)count, (void)codeptr;
}

static void on_task_create(ompt_data_t *encountering, const ompt_frame_t *frame, ompt_data_t *task, int flags,
                           int dependences, const void *codeptr) {
  (void)encountering, (void)frame, (void)task, (void)flags, (void)dependences, (void)codeptr;
}

static int initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *data) {
  (void)device, (void)data;
  ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
  if (set == NULL) return 0;
  set(ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin);
  set(ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task);
  set(ompt_callback_thread_begin, (ompt_callback_t)on_thread_begin);
  set(ompt_callback_sync_region_wait, (ompt_callback_t)on_sync_region_wait);
  set(ompt_callback_task_schedule, (ompt_callback_t)on_task_schedule);
  set(ompt_callback_work, (ompt_callback_t)on_work);
  set(ompt_callback_task_create, (ompt_callback_t)on_task_create);
  return 1;
}

static void finalize(ompt_data_t *data) { (void)data; }

ompt_start_tool_result_t *ompt_start_tool(unsigned int version, const char *runtime) {
  (void)version, (void)runtime;
  static ompt_start_tool_result_t result = {initialize, finalize, {0}};
  return &result;
}
