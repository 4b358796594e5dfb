/*
 * copies.c — the --eval-every copies (copies.h).
 */
#include "config.h"
#include "copies.h"
#include "grow.h"

#include <stdlib.h>
#include <string.h>

tr_copy *tr_copies_add(tr_copies *c, size_t floats)
{
	if (rio__grow(&c->v, &c->cap, (size_t)c->n + 1, sizeof *c->v, 64))
		return NULL;
	tr_copy *p = &c->v[c->n];
	memset(p, 0, sizeof *p);
	if (!(p->params = malloc((floats ? floats : 1) * sizeof(float))))
		return NULL;
	c->n++;
	return p;
}

void tr_copies_clear(tr_copies *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->v[i].params);
	c->n = 0;
}

void tr_copies_free(tr_copies *c)
{
	tr_copies_clear(c);
	free(c->v);
	memset(c, 0, sizeof *c);
}
