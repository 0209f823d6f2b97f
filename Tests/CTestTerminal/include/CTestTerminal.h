// CTestTerminal: a pseudo-terminal for the end-to-end tests (posix_openpt, grantpt and
// ptsname are X/Open declarations Swift's Glibc module does not see).
#ifndef CTESTTERMINAL_H
#define CTESTTERMINAL_H

#include <stddef.h>

/// Opens a new pseudo-terminal: returns its master side (close-on-exec, non-blocking) and
/// writes the slave's path into `path`; -1 with errno on failure.
int ctest_open_pty(char *path, size_t size);

#endif
