/*
 * cmp_repair.h — salvage of a damaged, closed database in place
 * (cmp_repair.c).
 */
#ifndef CMP_REPAIR_H
#define CMP_REPAIR_H

/* Salvage the closed store at path in place: what is intact stays, damaged
 * files move to path/lost/ (kv_repair). The tables may then disagree with
 * the documents: the caller rebuilds them. */
int st_repair(const char *path);

#endif /* CMP_REPAIR_H */
