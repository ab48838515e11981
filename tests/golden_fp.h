/* golden_fp.h — frozen fingerprints of versions 1 (golden_fp, computed with
 * ND_FP_FUNCTION(1)) and 2 (golden_fp_v2) of the fingerprint function.
 * Generated once by running the inputs of golden_fp_inputs.h; never
 * regenerate: a change here is a change of the fingerprint function and
 * needs a new ND_FP_VERSION. */
#ifndef GOLDEN_FP_H
#define GOLDEN_FP_H
#include <stdint.h>
static const uint64_t golden_fp[] = {
    0x0000000000000000ull, /* 0 */
    0xfbca4ebf15976028ull, /* 1 */
    0x35f38d1f7a8fc47cull, /* 2 */
    0x330d3e8ac3f9f97eull, /* 3 */
    0x9b90dec00bb80700ull, /* 4 */
    0x35f38d1f7a8fc47cull, /* 5 */
    0x36c8438848b3b3eeull, /* 6 */
    0x12721e812e815020ull, /* 7 */
    0x35f38d1f7a8fc47cull, /* 8 */
    0x0045891000084018ull, /* 9 */
    0x2eef205d1902bc87ull, /* 10 */
    0x69ee00df91165433ull, /* 11 */
    0x122684820440628bull, /* 12 */
    0x7e120a5391f36310ull, /* 13 */
    0x41213826510f420dull, /* 14 */
    0x9c9721a92bae610aull, /* 15 */
    0x763aeeb333d07e37ull, /* 16 */
    0x661ac4b310503a27ull, /* 17 */
    0xe7a89aa2e68b4f78ull, /* 18 */
    0x2226861098001600ull, /* 19 */
    0xeb67bce173b81cfdull, /* 20 */
    0x66e21043880096faull, /* 21 */
    0xa3d3f7522ed9dd3eull, /* 22 */
    0x0780e54024c8242aull, /* 23 */
    0x0d204f4801880090ull, /* 24 */
    0x1dfa2e275b583e65ull, /* 25 */
    0x0000000000000000ull, /* 26 */
    0x33502bb9ec9f7e0eull, /* 27 */
    0x6b841001082ca000ull, /* 28 */
    0x85ed1805c6cdcd97ull, /* 29 */
};
static const char *const golden_config[] = {
    "fp1;shingles:3;nfkc-cf;cjk2;stop:0000000000000000;title:2",
    "fp1;words:1;nfkc-cf;cjk2;stop:0000000000000000;title:2",
    "fp1;shingles:3;nfkc-cf;cjk2;stop:0000000000000000;title:2",
    "fp1;chars:4;nfkc-cf;cjk2;stop:0000000000000000;title:2",
};
/* Version 2 (golden_inputs_v2), frozen in the same way. */
static const uint64_t golden_fp_v2[] = {
    0x122684820440628bull, /* 0 */
    0x122684820440628bull, /* 1 */
    0x122684820440628bull, /* 2 */
    0x122684820440628bull, /* 3 */
    0x122684820440628bull, /* 4 */
    0x122684820440628bull, /* 5 */
    0x41213826510f420dull, /* 6 */
    0x41213826510f420dull, /* 7 */
    0x0659ea5eb5ceb815ull, /* 8 */
    0x0659ea5eb5ceb815ull, /* 9 */
    0x0659ea5eb5ceb815ull, /* 10 */
    0x763aeeb333d07e37ull, /* 11 */
    0xee9b5a31d2c1e3ffull, /* 12 */
    0xee9b5a31d2c1e3ffull, /* 13 */
    0xddc65a7b997a7709ull, /* 14 */
    0x41376fb630c65666ull, /* 15 */
    0x41376fb630c65666ull, /* 16 */
    0x41376fb630c65666ull, /* 17 */
    0x18cb0008482aa36bull, /* 18 */
    0x0110408c2060dcc2ull, /* 19 */
    0x04b2490980460a33ull, /* 20 */
    0x81086200030886b5ull, /* 21 */
    0x0410480990a20300ull, /* 22 */
    0x0410480990a20300ull, /* 23 */
    0x1b2f4410d4208f83ull, /* 24 */
    0x3bf8077a315f5802ull, /* 25 */
    0x41376fb630c65666ull, /* 26 */
    0x41376fb630c65666ull, /* 27 */
    0x400106a410861064ull, /* 28 */
    0x661ac4b310503a27ull, /* 29 */
    0x0548002052002410ull, /* 30 */
    0x6e931e7b93b3abb2ull, /* 31 */
    0x122684820440628bull, /* 32 */
    0x122684820440628bull, /* 33 */
    0x0790b58014d00130ull, /* 34 */
    0x210f5bb566bba64dull, /* 35 */
    0xbbd256b6351f8035ull, /* 36 */
    0xbbd256b6351f8035ull, /* 37 */
    0x9daa432c4b7111d6ull, /* 38 */
};
static const char *const golden_config_v2[] = {
    "fp2;shingles:3;nfkc-cf;cjk2;stop:0000000000000000;title:1",
    "fp2;words:1;nfkc-cf;cjk2;stop:0000000000000000;title:1",
    "fp2;shingles:3;nfkc-cf;cjk2;stop:0000000000000000;title:1",
    "fp2;chars:4;nfkc-cf;cjk2;stop:0000000000000000;title:1",
};
#endif
