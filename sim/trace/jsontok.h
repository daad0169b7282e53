/* A streaming JSON tokenizer over tr_in (internal to sim/trace): constant
 * memory whatever the document size, for the Kineto importer. */
#ifndef TS_JSONTOK_H
#define TS_JSONTOK_H

#include "trace.h"

typedef enum {
    JT_ERR = -1, JT_EOF = 0, JT_OBJ, JT_OBJ_END, JT_ARR, JT_ARR_END, JT_STR, JT_NUM, JT_LIT
} jt_kind;

typedef struct jt {
    tr_in *in;
    unsigned char *buf; /* read-ahead block from in */
    size_t pos, len;
    int peek;        /* pushed-back byte, -2 none */
    char *s;         /* JT_STR: the string (truncated to smax bytes), JT_LIT: the literal */
    size_t slen, scap, smax;
    double num;      /* JT_NUM */
    int depth;
    long line;       /* 1-based line of the current position */
    char err[160];
} jt;

void jt_init(jt *t, tr_in *in, size_t smax);
void jt_free(jt *t);
/* Next token; ',' and ':' are separators and skipped. */
jt_kind jt_next(jt *t);
/* Skip the rest of a value whose first token k was just read. */
int jt_skip(jt *t, jt_kind k);

#endif
