/*
 * mlp.c — forward, loss and backward of the MLP in mlp.h, as GEMMs and the
 * small elementwise operations of backend.h. Dense layer l computes
 * out_l = act(in_l W_l^T + b_l) with W_l of sizes[l + 1] x sizes[l]; the
 * first layer's input is the feature blocks side by side, multiplied block
 * by block against column slices of W_0, so they are never copied into one
 * matrix. Under --precision bf16 the same GEMMs take bf16 operands: the
 * passes that write an operand (the bias and ReLU, the ReLU's backward,
 * the optimizer's update) write its bf16 copy too, in the same pass; a
 * layer whose input is one block is one call (tr_dense_bf16: on the CPU
 * one oneDNN primitive, the bias and ReLU its post-ops), its output bf16
 * alone where it is a hidden layer's (the ReLU's backward masks by it).
 */
#include "config.h"
#include "mlp.h"

#include "rng.h"

#include <errno.h>
#include <math.h>
#include <string.h>

int tr_mlp_layout(tr_mlp *net, const int *sizes, int nlayers)
{
	memset(net, 0, sizeof *net);
	if (nlayers < 1 || nlayers > TR_MLP_MAX_LAYERS)
		return -EINVAL;
	net->nlayers = nlayers;
	for (int l = 0; l <= nlayers; l++) {
		if (sizes[l] < 1)
			return -EINVAL;
		net->sizes[l] = sizes[l];
	}
	/* last layer first: backward completes the buffer front to back */
	size_t off = 0;
	for (int l = nlayers - 1; l >= 0; l--) {
		net->w_off[l] = off;
		off += (size_t)sizes[l + 1] * (size_t)sizes[l];
		net->b_off[l] = off;
		off += (size_t)sizes[l + 1];
		net->ready[l] = off;
	}
	net->nparams = off;
	return 0;
}

static int widest_layer(const tr_mlp *net)
{
	int widest = 0;
	for (int l = 1; l <= net->nlayers; l++)
		if (net->sizes[l] > widest)
			widest = net->sizes[l];
	return widest;
}

int tr_mlp_init(tr_mlp *net, tr_math *math, const int *sizes, int nlayers, int max_rows,
                float *params, float *grads)
{
	int rc = tr_mlp_layout(net, sizes, nlayers);
	if (rc < 0 || max_rows < 1 || !params || !grads) {
		memset(net, 0, sizeof *net);
		return rc < 0 ? rc : -EINVAL;
	}
	net->math = math;
	net->max_rows = max_rows;
	net->params = params;
	net->grads = grads;
	int widest = widest_layer(net);
	int ok = 1;
	for (int l = 0; l < nlayers && ok; l++)
		ok = (net->out[l] = tr_math_alloc(math, (size_t)max_rows * sizes[l + 1])) != NULL;
	for (int i = 0; i < 2 && ok; i++)
		ok = (net->delta[i] = tr_math_alloc(math, (size_t)max_rows * widest)) != NULL;
	if (!ok) {
		tr_mlp_free(net);
		return -ENOMEM;
	}
	return 0;
}

void tr_mlp_free(tr_mlp *net)
{
	if (!net->math)
		return;
	for (int l = 0; l < net->nlayers; l++)
		tr_math_free(net->math, net->out[l]);
	for (int i = 0; i < 2; i++)
		tr_math_free(net->math, net->delta[i]);
	tr_math_free(net->math, net->dinput);
	tr_math_free(net->math, net->in16);
	for (int l = 0; l < net->nlayers; l++)
		tr_math_free(net->math, net->out16[l]);
	for (int i = 0; i < 2; i++)
		tr_math_free(net->math, net->delta16[i]);
	memset(net, 0, sizeof *net);
}

int tr_mlp_use_bf16(tr_mlp *net, tr_bf16 *params16, int by_update)
{
	if (!params16 || net->precision == TR_PRECISION_BF16)
		return -EINVAL;
	size_t rows = (size_t)net->max_rows, two = sizeof(tr_bf16);
	int ok = (net->in16 = tr_math_alloc_bytes(net->math, rows * net->sizes[0] * two)) != NULL;
	/* the hidden layers' outputs: the logits are no GEMM's operand */
	for (int l = 0; l < net->nlayers - 1 && ok; l++)
		ok = (net->out16[l] = tr_math_alloc_bytes(net->math, rows * net->sizes[l + 1] * two)) !=
		     NULL;
	for (int i = 0; i < 2 && ok; i++)
		ok = (net->delta16[i] = tr_math_alloc_bytes(net->math,
		                                            rows * widest_layer(net) * two)) != NULL;
	if (!ok)
		return -ENOMEM; /* what was allocated goes with tr_mlp_free */
	net->precision = TR_PRECISION_BF16;
	net->params16 = params16;
	net->params16_by_update = by_update;
	net->params16_stale = 1;
	return 0;
}

int tr_mlp_want_dinput(tr_mlp *net, int col, int cols)
{
	if (col < 0 || cols < 1 || cols > net->sizes[0] - col || net->dinput)
		return -EINVAL;
	net->dinput = tr_math_alloc(net->math, (size_t)net->max_rows * cols);
	if (!net->dinput)
		return -ENOMEM;
	net->dinput_col = col;
	net->dinput_cols = cols;
	return 0;
}

static float uniform(rio__rng *r, float bound)
{
	return (2.0f * rio__rng_float(r) - 1.0f) * bound;
}

void tr_mlp_init_layer(const int *sizes, int l, uint64_t seed, float *layer)
{
	rio__rng r;
	rio__rng_seed(&r, seed, (uint64_t)l, 0x6d6c70 /* "mlp" */, 0);
	int in = sizes[l], out = sizes[l + 1];
	float bound = 1.0f / sqrtf((float)in);
	for (size_t i = 0; i < (size_t)(in + 1) * out; i++) /* weights, then biases */
		layer[i] = uniform(&r, bound);
}

void tr_mlp_init_params(const tr_mlp *net, uint64_t seed, float *host)
{
	for (int l = 0; l < net->nlayers; l++)
		tr_mlp_init_layer(net->sizes, l, seed, host + net->w_off[l]);
}

static int bf16(const tr_mlp *net) { return net->precision == TR_PRECISION_BF16; }

/* Under bf16: the input blocks as bf16 (as given, or, with `round`,
 * rounded into in16), kept in net->part16 for backward. */
static void input_bf16(tr_mlp *net, const tr_input *in, int round)
{
	int col = 0;
	for (int p = 0; p < in->nparts; p++) {
		const tr_bf16 *x = in->part16[p];
		if (!x) {
			tr_bf16 *t = net->in16 + (size_t)net->max_rows * col +
			             (size_t)net->in16_row0 * in->width[p];
			if (round)
				tr_to_bf16(net->math, t, in->part[p], (size_t)in->rows * in->width[p]);
			x = t;
		}
		net->part16[p] = x;
		col += in->width[p];
	}
}

/* out = in_parts W_0^T: each feature block against its columns of W_0. */
static void first_layer_gemm(tr_mlp *net, const tr_input *in, float *out)
{
	int inputs = net->sizes[0], units = net->sizes[1], col = 0;
	for (int p = 0; p < in->nparts; p++) {
		if (bf16(net))
			tr_gemm_bf16(net->math, 0, 1, in->rows, units, in->width[p], net->part16[p],
			             in->width[p], net->params16 + net->w_off[0] + col, inputs,
			             p ? 1.0f : 0.0f, out, units);
		else
			tr_gemm(net->math, 0, 1, in->rows, units, in->width[p], 1.0f, in->part[p],
			        in->width[p], net->params + net->w_off[0] + col, inputs,
			        p ? 1.0f : 0.0f, out, units);
		col += in->width[p];
	}
}

void tr_mlp_forward(tr_mlp *net, const tr_input *in)
{
	int rows = in->rows;
	if (bf16(net)) {
		if (!net->params16_by_update || net->params16_stale)
			tr_to_bf16(net->math, net->params16, net->params, net->nparams);
		net->params16_stale = 0;
		input_bf16(net, in, 1);
	}
	for (int l = 0; l < net->nlayers; l++) {
		int units = net->sizes[l + 1], fan_in = net->sizes[l];
		int relu = l < net->nlayers - 1 || net->relu_last;
		if (bf16(net) && (l > 0 || in->nparts == 1) && !net->sum_out[l]) {
			/* one primitive: GEMM, bias, ReLU, and a hidden layer's
			 * output as bf16 alone (out16; the logits as fp32) */
			tr_dense_bf16(net->math, rows, units, fan_in, l ? net->out16[l - 1] : net->part16[0],
			              fan_in, net->params16 + net->w_off[l], fan_in,
			              net->params + net->b_off[l], relu, net->out[l], net->out16[l]);
			continue;
		}
		if (l == 0)
			first_layer_gemm(net, in, net->out[0]);
		else if (bf16(net))
			tr_gemm_bf16(net->math, 0, 1, rows, units, fan_in, net->out16[l - 1], fan_in,
			             net->params16 + net->w_off[l], fan_in, 0.0f, net->out[l], units);
		else
			tr_gemm(net->math, 0, 1, rows, units, fan_in, 1.0f, net->out[l - 1], fan_in,
			        net->params + net->w_off[l], fan_in, 0.0f, net->out[l], units);
		if (net->sum_out[l]) /* partial sums: the whole before the bias */
			net->reduce(net->reduce_ctx, net->out[l], (size_t)rows * units);
		/* the hidden layers' bf16 outputs in the same pass (NULL: none) */
		tr_bias_act16(net->math, net->out[l], net->params + net->b_off[l], rows, units, relu,
		              net->out16[l]);
	}
}

void tr_mlp_bind16(tr_mlp *net, const tr_input *in)
{
	if (bf16(net))
		input_bf16(net, in, 0);
}

void tr_mlp_loss(tr_mlp *net, const tr_input *in, float *stats, int backward)
{
	int L = net->nlayers;
	/* with backward, the last layer's bias gradient comes in the same pass */
	tr_softmax_xent(net->math, net->out[L - 1], in->labels, in->rows, net->sizes[L],
	                backward ? net->delta[0] : NULL,
	                backward ? net->grads + net->b_off[L - 1] : NULL, stats);
	if (backward && bf16(net)) /* rows x classes: a small pass */
		tr_to_bf16(net->math, net->delta16[0], net->delta[0],
		           (size_t)in->rows * net->sizes[L]);
}

void tr_mlp_output_grad(tr_mlp *net, float *dout, int rows)
{
	int L = net->nlayers, units = net->sizes[L];
	tr_relu_bias_backward(net->math, dout, net->out[L - 1], rows, units,
	                      net->grads + net->b_off[L - 1]);
	if (bf16(net)) /* the last layer's GEMMs take it rounded */
		tr_to_bf16(net->math, net->delta16[0], dout, (size_t)rows * units);
	net->dz_from = dout;
}

/* Layer l's weight gradient: dz^T times the layer's input (the feature
 * blocks, each into its columns, for the first layer); under bf16, dz16
 * (dz rounded) times the bf16 inputs. Into grads, or net->wsum's sum
 * (added to by the GEMM itself: no pass over the sum of its own). */
static void weight_grad(tr_mlp *net, const tr_input *in, int l, const float *dz,
                        const tr_bf16 *dz16)
{
	int rows = in->rows, fan_in = net->sizes[l], units = net->sizes[l + 1];
	float *dW = (net->wsum ? net->wsum : net->grads) + net->w_off[l];
	float beta = net->wsum && !net->wsum_first ? 1.0f : 0.0f;
	int nparts = l == 0 ? in->nparts : 1, col = 0;
	for (int p = 0; p < nparts; p++) {
		int width = l == 0 ? in->width[p] : fan_in;
		if (bf16(net))
			tr_gemm_bf16(net->math, 1, 0, units, width, rows, dz16, units,
			             l == 0 ? net->part16[p] : net->out16[l - 1], width, beta, dW + col,
			             fan_in);
		else
			tr_gemm(net->math, 1, 0, units, width, rows, 1.0f, dz, units,
			        l == 0 ? in->part[p] : net->out[l - 1], width, beta, dW + col, fan_in);
		col += width;
	}
}

/* The gradient flowing into layer l's input (l > 0), through the ReLU of
 * layer l - 1, into spare (and spare16 under bf16), and layer l - 1's bias
 * gradient, while W_l is still the step's. */
static void input_grad(tr_mlp *net, int rows, int l, const float *dz, const tr_bf16 *dz16,
                       float *spare, tr_bf16 *spare16)
{
	int fan_in = net->sizes[l], units = net->sizes[l + 1];
	if (bf16(net))
		tr_gemm_bf16(net->math, 0, 0, rows, fan_in, units, dz16, units,
		             net->params16 + net->w_off[l], fan_in, 0.0f, spare, fan_in);
	else
		tr_gemm(net->math, 0, 0, rows, fan_in, units, 1.0f, dz, units,
		        net->params + net->w_off[l], fan_in, 0.0f, spare, fan_in);
	if (net->sum_din[l]) /* a slice's share: the whole over the group */
		net->reduce(net->reduce_ctx, spare, (size_t)rows * fan_in);
	if (bf16(net)) /* the mask from the bf16 output: the one the CPU wrote */
		tr_relu_bias_backward16(net->math, spare, net->out[l - 1], net->out16[l - 1], rows,
		                        fan_in, net->grads + net->b_off[l - 1], spare16);
	else
		tr_relu_bias_backward(net->math, spare, net->out[l - 1], rows, fan_in,
		                      net->grads + net->b_off[l - 1]);
}

void tr_mlp_backward(tr_mlp *net, const tr_input *in, tr_mlp_ready_fn ready, void *ctx)
{
	int rows = in->rows;
	/* from the loss's gradient, or a later stage's (tr_mlp_output_grad),
	 * then between the two scratch buffers (under bf16, delta16[0] holds
	 * the first rounded, from either) */
	float *from = net->dz_from;
	float *dz = from ? from : net->delta[0], *spare = net->delta[1];
	tr_bf16 *dz16 = net->delta16[0], *spare16 = net->delta16[1];
	net->dz_from = NULL;
	for (int l = net->nlayers - 1; l >= 0; l--) {
		int fan_in = net->sizes[l], units = net->sizes[l + 1];
		/* (layer l's bias gradient is already there: from the loss's pass
		 * for the last layer, from the ReLU's pass below for the others) */
		if (l > 0) /* first, while W_l is still the step's */
			input_grad(net, rows, l, dz, dz16, spare, spare16);
		/* then W_l's gradient, whole: one GEMM. (Cut into pieces at the
		 * buckets' ends, to start their sums earlier, its pieces of 40
		 * to 84 rows ran at 185-223 GFLOP/s against 232 whole, and the
		 * bits depended on --bucket-size: 784-256-128-10, 2 ranks on a
		 * 2-core AMD EPYC, where 128-row pieces were still 1.5% slower
		 * a step than whole ones) */
		weight_grad(net, in, l, dz, dz16);
		/* the input's gradient, when asked for: dz W_0 over the columns
		 * asked, while W_0 is still the step's (before ready) */
		if (l == 0 && net->dinput && bf16(net) && net->dinput16)
			tr_gemm_bf16(net->math, 0, 0, rows, net->dinput_cols, units, dz16, units,
			             net->params16 + net->w_off[0] + net->dinput_col, fan_in, 0.0f,
			             net->dinput, net->dinput_cols);
		else if (l == 0 && net->dinput)
			tr_gemm(net->math, 0, 0, rows, net->dinput_cols, units, 1.0f, dz, units,
			        net->params + net->w_off[0] + net->dinput_col, fan_in, 0.0f,
			        net->dinput, net->dinput_cols);
		if (l == 0 && net->dinput && net->sum_din[0])
			net->reduce(net->reduce_ctx, net->dinput, (size_t)rows * net->dinput_cols);
		if (l > 0) {
			float *t = dz;
			dz = spare;
			spare = t == from ? net->delta[0] : t;
			tr_bf16 *t16 = dz16;
			dz16 = spare16;
			spare16 = t16;
		}
		if (ready)
			ready(ctx, net->ready[l]);
	}
}
