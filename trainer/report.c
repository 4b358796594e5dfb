/*
 * report.c — formatting an epoch's figures for people (one line; a
 * non-finite loss reads "nan") and for programs (JSON lines, where it is
 * null: JSON has no NaN).
 */
#include "config.h"
#include "report.h"
#include "json.h"

#include <math.h>

/* A loss or accuracy for people: 4 decimals, "nan" or "inf" (never "-nan"),
 * and 4 digits with an exponent for a diverging loss. */
static const char *readable(char *buf, size_t size, double v)
{
	if (isnan(v))
		snprintf(buf, size, "nan");
	else if (isinf(v))
		snprintf(buf, size, v > 0 ? "inf" : "-inf");
	else
		snprintf(buf, size, fabs(v) < 1e6 ? "%.4f" : "%.4g", v);
	return buf;
}

void tr_report_line(FILE *f, const tr_epoch_report *r)
{
	double wait = r->seconds > 0 ? r->data_wait_seconds / r->seconds : 0;
	char b1[32], b2[32];
	fprintf(f, "epoch %3llu%s  train loss %s  ", (unsigned long long)r->epoch,
	        r->partial ? " (partial)" : "", readable(b1, sizeof b1, r->train_loss));
	if (r->has_test)
		fprintf(f, "test loss %s  test accuracy %s  ", readable(b1, sizeof b1, r->test_loss),
		        readable(b2, sizeof b2, r->test_accuracy));
	fprintf(f, "%.0f samples/s  data wait %.2f%%  %s %.3fs", r->samples_per_s, 100.0 * wait,
	        r->servers ? "exchange" : "allreduce", r->allreduce_seconds);
	if (r->servers)
		fprintf(f, "  updates %llu  staleness max %llu mean %.2f  dropped %llu",
		        (unsigned long long)r->updates, (unsigned long long)r->staleness_max,
		        r->staleness_mean, (unsigned long long)r->dropped_gradients);
	if (r->skipped_steps)
		fprintf(f, "  skipped %llu steps (non-finite)", (unsigned long long)r->skipped_steps);
	fputc('\n', f);
	fflush(f);
}

int tr_report_json(FILE *f, const tr_epoch_report *r)
{
	double wait = r->seconds > 0 ? r->data_wait_seconds / r->seconds : 0;
	fprintf(f,
	        "{\"epoch\": %llu, %s\"steps\": %llu, \"skipped_steps\": %llu, "
	        "\"samples\": %llu, ",
	        (unsigned long long)r->epoch, r->partial ? "\"partial\": true, " : "",
	        (unsigned long long)r->steps, (unsigned long long)r->skipped_steps,
	        (unsigned long long)r->samples);
	rio__json_member(f, "train_loss", r->train_loss, 6);
	rio__json_member(f, "train_accuracy", r->train_accuracy, 6);
	rio__json_member(f, "test_loss", r->has_test ? r->test_loss : NAN, 6);
	rio__json_member(f, "test_accuracy", r->has_test ? r->test_accuracy : NAN, 6);
	fprintf(f, "\"test_records\": %llu, ",
	        (unsigned long long)(r->has_test ? r->test_records : 0));
	rio__json_member(f, "samples_per_s", r->samples_per_s, 6);
	rio__json_member(f, "seconds", r->seconds, 6);
	rio__json_member(f, "data_wait_seconds", r->data_wait_seconds, 6);
	rio__json_member(f, "data_wait_fraction", wait, 6);
	rio__json_member(f, "gemm_seconds", r->gemm_seconds, 6);
	rio__json_member(f, "gemm_gflops", r->gemm_gflops, 6);
	rio__json_member(f, "allreduce_seconds", r->allreduce_seconds, 6);
	rio__json_member(f, "optimizer_seconds", r->optimizer_seconds, 6);
	rio__json_member(f, "lr", r->lr, 6);
	rio__json_member(f, "wall_seconds", r->wall_seconds, 6);
	rio__json_member(f, "bytes_per_step", r->bytes_per_step, 6);
	fprintf(f, "\"grad_overflows\": %llu, ", (unsigned long long)r->grad_overflows);
	if (r->servers) {
		rio__json_member(f, "server_bytes_per_step", r->server_bytes_per_step, 6);
		fprintf(f, "\"strategy\": \"%s\", \"updates\": %llu, \"gradients\": %llu, "
		        "\"dropped_gradients\": %llu, \"staleness_max\": %llu, ",
		        r->servers, (unsigned long long)r->updates, (unsigned long long)r->gradients,
		        (unsigned long long)r->dropped_gradients, (unsigned long long)r->staleness_max);
		rio__json_member(f, "staleness_mean", r->staleness_mean, 6);
		fprintf(f, "\"worker_steps\": [");
		for (int i = 0; i < r->workers; i++)
			fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)r->worker_steps[i]);
		fprintf(f, "], ");
	}
	fprintf(f, "\"world\": %d}\n", r->world);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

int tr_report_snapshot_json(FILE *f, const tr_snapshot_report *s)
{
	fprintf(f, "{\"snapshot\": true, \"epoch\": %llu, \"updates\": %llu, \"gradients\": %llu, ",
	        (unsigned long long)s->epoch, (unsigned long long)s->updates,
	        (unsigned long long)s->gradients);
	rio__json_member(f, "samples", s->samples, 6);
	rio__json_member(f, "wall_seconds", s->wall_seconds, 6);
	rio__json_member(f, "test_loss", s->test_loss, 6);
	/* the last member: no trailing comma */
	fprintf(f, "\"test_accuracy\": ");
	rio__json_number(f, s->test_accuracy, 6);
	fputs("}\n", f);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
