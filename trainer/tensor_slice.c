/*
 * tensor_slice.c — a rank's slices of the model and their copies to and
 * from the whole model's layout (tensor_slice.h).
 */
#include "config.h"
#include "tensor_slice.h"

#include <string.h>

void tr_slice_of(tr_slice *s, const tr_layout *l, const int *sizes, int nlayers)
{
	memset(s, 0, sizeof *s);
	s->first = l->first[l->p];
	s->nlayers = l->first[l->p + 1] - s->first;
	s->sizes[0] = sizes[s->first];
	for (int j = 0; j < s->nlayers; j++) {
		int i = s->first + j;
		s->split[j] = tr_layout_split(l, l->p, i, nlayers);
		s->sizes[j + 1] = s->split[j] == TR_SPLIT_COLUMNS ? sizes[i + 1] / l->T : sizes[i + 1];
	}
	s->nparams = tr_mlp_param_count(s->sizes, s->nlayers);
}

void tr_slice_each_run(const tr_slice *s, const tr_layout *l, const int *sizes, int nlayers,
                       int owned, tr_slice_run_fn fn, void *ctx)
{
	tr_mlp all, part;
	tr_mlp_layout(&all, sizes, nlayers);
	tr_mlp_layout(&part, s->sizes, s->nlayers);
	int owner = !owned || l->t == 0; /* of what the group holds whole */
	for (int j = 0; j < s->nlayers; j++) {
		int i = s->first + j, out = sizes[i + 1], in = sizes[i], k = s->split[j];
		/* rows of W (row-major, out x in): the first of a pair's slice of
		 * output units, or whole (one run); the second's: columns, a run
		 * a row */
		size_t rows = k == TR_SPLIT_COLUMNS ? (size_t)out / l->T : (size_t)out;
		size_t cols = k == TR_SPLIT_ROWS ? (size_t)in / l->T : (size_t)in;
		size_t r0 = k == TR_SPLIT_COLUMNS ? (size_t)l->t * rows : 0;
		size_t c0 = k == TR_SPLIT_ROWS ? (size_t)l->t * cols : 0;
		int sliced = k != TR_SPLIT_NONE, bias_sliced = k == TR_SPLIT_COLUMNS;
		if (sliced || owner) {
			size_t per = k == TR_SPLIT_ROWS ? 1 : rows; /* rows a run */
			for (size_t r = 0; r < rows; r += per) {
				tr_slice_run run = {all.w_off[i] + (r0 + r) * (size_t)in + c0,
				                    part.w_off[j] + r * cols, per * cols};
				fn(ctx, &run);
			}
		}
		if (bias_sliced || owner) {
			tr_slice_run run = {all.b_off[i] + (bias_sliced ? r0 : 0), part.b_off[j],
			                    bias_sliced ? rows : (size_t)out};
			fn(ctx, &run);
		}
	}
}

/* tr_slice_copy's direction and buffers. */
struct copy {
	float *whole, *mine;
	int to_whole;
};

static void copy_run(void *ctx, const tr_slice_run *r)
{
	struct copy *c = ctx;
	float *at = c->whole + r->whole_at, *here = c->mine + r->mine_at;
	memcpy(c->to_whole ? at : here, c->to_whole ? here : at, r->n * sizeof *at);
}

void tr_slice_copy(const tr_slice *s, const tr_layout *l, const int *sizes, int nlayers,
                   float *whole, float *mine, int to_whole)
{
	struct copy c = {whole, mine, to_whole};
	tr_slice_each_run(s, l, sizes, nlayers, to_whole, copy_run, &c);
}
