/* test_client_header.c — <neardup_client.h> alone compiles under -Wall
 * -Wextra -Wpedantic -Werror, as C11 (here) and as C++11 (the same file
 * compiled as C++ by tests/client/meson.build). */
#include <neardup_client.h>

int main(void)
{
    nd_client_options o = ND_CLIENT_OPTIONS_INIT;
    return o.version == ND_CLIENT_OPTIONS_VERSION ? 0 : 1;
}
