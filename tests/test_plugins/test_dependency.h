/* A library that missing_dependency links against but that is not on its search path. */
#ifndef KAEL_TEST_DEPENDENCY_H
#define KAEL_TEST_DEPENDENCY_H

int kael_test_dependency_device_count(void);

#endif /* KAEL_TEST_DEPENDENCY_H */
