/*
 * report.c — formatting an epoch's figures for people (one line) and for
 * programs (JSON lines).
 */
#include "config.h"
#include "report.h"

void tr_report_line(FILE *f, const tr_epoch_report *r)
{
	double wait = r->seconds > 0 ? r->data_wait_seconds / r->seconds : 0;
	fprintf(f, "epoch %3llu  train loss %.4f  ", (unsigned long long)r->epoch, r->train_loss);
	if (r->has_test)
		fprintf(f, "test loss %.4f  test accuracy %.4f  ", r->test_loss, r->test_accuracy);
	fprintf(f, "%.0f samples/s  data wait %.2f%%  allreduce %.3fs", r->samples_per_s,
	        100.0 * wait, r->allreduce_seconds);
	if (r->skipped_steps)
		fprintf(f, "  skipped %llu steps (non-finite)", (unsigned long long)r->skipped_steps);
	fputc('\n', f);
	fflush(f);
}

int tr_report_json(FILE *f, const tr_epoch_report *r)
{
	double wait = r->seconds > 0 ? r->data_wait_seconds / r->seconds : 0;
	fprintf(f,
	        "{\"epoch\": %llu, \"steps\": %llu, \"skipped_steps\": %llu, "
	        "\"train_loss\": %.6g, \"train_accuracy\": %.6g, ",
	        (unsigned long long)r->epoch, (unsigned long long)r->steps,
	        (unsigned long long)r->skipped_steps, r->train_loss, r->train_accuracy);
	if (r->has_test)
		fprintf(f, "\"test_loss\": %.6g, \"test_accuracy\": %.6g, \"test_records\": %llu, ",
		        r->test_loss, r->test_accuracy, (unsigned long long)r->test_records);
	else
		fprintf(f, "\"test_loss\": null, \"test_accuracy\": null, \"test_records\": 0, ");
	fprintf(f,
	        "\"samples_per_s\": %.6g, \"seconds\": %.6g, \"data_wait_seconds\": %.6g, "
	        "\"data_wait_fraction\": %.6g, \"gemm_seconds\": %.6g, \"gemm_gflops\": %.6g, "
	        "\"allreduce_seconds\": %.6g, \"optimizer_seconds\": %.6g, \"lr\": %.6g, "
	        "\"world\": %d}\n",
	        r->samples_per_s, r->seconds, r->data_wait_seconds, wait, r->gemm_seconds,
	        r->gemm_gflops, r->allreduce_seconds, r->optimizer_seconds, r->lr, r->world);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
