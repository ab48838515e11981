// test_client_header.cpp — test_client_header.c compiled as C++11.
#include "test_client_header.c"
