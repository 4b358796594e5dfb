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

void tr_slice_copy(const tr_slice *s, const tr_layout *l, const int *sizes, int nlayers,
                   float *whole, float *mine, int to_whole)
{
	tr_mlp all, part;
	tr_mlp_layout(&all, sizes, nlayers);
	tr_mlp_layout(&part, s->sizes, s->nlayers);
	int owner = l->t == 0; /* of what the group holds whole */
	for (int j = 0; j < s->nlayers; j++) {
		int i = s->first + j, out = sizes[i + 1], in = sizes[i], k = s->split[j];
		float *W = whole + all.w_off[i], *b = whole + all.b_off[i];
		float *w = mine + part.w_off[j], *bm = mine + part.b_off[j];
		/* rows of W (row-major, out x in): the first of a pair's slice of
		 * output units, or whole; the second's: columns, row by row */
		size_t rows = k == TR_SPLIT_COLUMNS ? (size_t)out / l->T : (size_t)out;
		size_t cols = k == TR_SPLIT_ROWS ? (size_t)in / l->T : (size_t)in;
		size_t r0 = k == TR_SPLIT_COLUMNS ? (size_t)l->t * rows : 0;
		size_t c0 = k == TR_SPLIT_ROWS ? (size_t)l->t * cols : 0;
		int sliced = k != TR_SPLIT_NONE, bias_sliced = k == TR_SPLIT_COLUMNS;
		for (size_t r = 0; r < rows && (!to_whole || sliced || owner); r++) {
			float *at = W + (r0 + r) * (size_t)in + c0, *here = w + r * cols;
			memcpy(to_whole ? at : here, to_whole ? here : at, cols * sizeof *at);
		}
		size_t nb = bias_sliced ? rows : (size_t)out;
		float *bat = b + (bias_sliced ? r0 : 0);
		if (!to_whole || bias_sliced || owner)
			memcpy(to_whole ? bat : bm, to_whole ? bm : bat, nb * sizeof *bat);
	}
}
