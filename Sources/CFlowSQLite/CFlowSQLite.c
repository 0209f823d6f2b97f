#include "CFlowSQLite.h"

#include <sqlite3.h>

int cflow_sqlite_configure(void) {
    int threading = sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
    int memstatus = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    return threading == SQLITE_OK && memstatus == SQLITE_OK ? 0 : 1;
}
