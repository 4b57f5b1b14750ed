#include "test_dependency.h"

int kael_test_dependency_device_count(void) { return 1; }
