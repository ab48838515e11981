#include "test_header.c"
