/* Compiled as strict C99: plugin_api.h must stay usable from plain C plugins. */
#include "kael/plugin_api.h"

size_t kael_abi_c99_table_size(void);

size_t kael_abi_c99_table_size(void) {
    kael_plugin table = {0};
    table.struct_size = sizeof(kael_plugin);
    table.abi_major = KAEL_ABI_MAJOR;
    return table.struct_size + offsetof(kael_plugin, scatter_add);
}
