// What the two-host tool needs of the C library that Swift does not import: prctl(2) is
// variadic.
#ifndef CLAB_TWO_HOST_SHIM_H
#define CLAB_TWO_HOST_SHIM_H
#include <sys/prctl.h>

/// Makes this process the subreaper of its descendants: an orphan among them (a link's
/// holder, whose starting script exited) becomes its child. 0 on success.
static inline int c_lab_become_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }
#endif
