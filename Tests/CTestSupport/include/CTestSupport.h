// CTestSupport: what the end-to-end tests and their helper child need from C: a
// pseudo-terminal (posix_openpt, grantpt and ptsname are X/Open declarations Swift's Glibc
// module does not see) and prctl (variadic).
#ifndef CTESTSUPPORT_H
#define CTESTSUPPORT_H

#include <stddef.h>

/// Opens a new pseudo-terminal: returns its master side (close-on-exec, non-blocking) and
/// writes the slave's path into `path`; -1 with errno on failure.
int ctest_open_pty(char *path, size_t size);

/// Makes the calling process a child subreaper (PR_SET_CHILD_SUBREAPER, kept across exec):
/// orphans below it become its children, as under a container's pid 1. 0 or -1.
int ctest_become_subreaper(void);

#endif
