/* A shared library named like a plugin whose entry point is misspelled. */
#include "kael/plugin_api.h"

KAEL_PLUGIN_EXPORT int kael_plugin_querry(void);

KAEL_PLUGIN_EXPORT int kael_plugin_querry(void) { return KAEL_ABI_MAJOR; }
