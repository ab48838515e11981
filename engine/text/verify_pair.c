/*
 * verify_pair.c — the near-duplicate decision (see verify_pair.h).
 *
 * Resemblance is the share of equal bins of the two 128-bin sketches
 * (standard error about sqrt(J (1 - J) / 128), 0.027 at J = 0.85).
 * Containment is not estimated from the sketches directly: one-permutation
 * sketches estimate J, and the sizes of the two feature sets turn J into
 * the intersection, |A n B| = J (|A| + |B|) / (1 + J), then the share of
 * the smaller set it covers (Broder's "roughly contained"). Its error grows
 * as J falls, which is why a short text inside a much longer one (J below
 * 0.3) is not a pair to trust.
 */
#include "verify_pair.h"

double verify_containment(double j, uint32_t na, uint32_t nb)
{
    uint32_t lo = na < nb ? na : nb;
    if (lo == 0) return 0;
    double c = j * ((double)na + (double)nb) / (1 + j) / (double)lo;
    return c < 1 ? c : 1;
}

int verify_pair(verify_result *out, const verify_doc *a, const verify_doc *b,
                const verify_rule *rule)
{
    *out = (verify_result){nd_hamming(a->fp, b->fp), -1, -1, 0};
    if (!a->sketch || !b->sketch) return out->dist <= rule->k_without_sketch;
    out->resemblance = nd_sketch_resemblance(a->sketch, b->sketch);
    if (rule->min_containment > 0)
        out->containment = verify_containment(out->resemblance, a->distinct, b->distinct);
    if (out->dist > rule->k) return 0;
    if (rule->min_resemblance <= 0 || out->resemblance >= rule->min_resemblance) return 1;
    if (rule->min_containment > 0 && out->containment >= rule->min_containment)
        return out->by_containment = 1;
    return 0;
}
