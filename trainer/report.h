/*
 * report.h — what rank 0 says after each epoch: one line on stdout, and one
 * JSON object per line in the --metrics file.
 */
#ifndef RIO_TRAINER_REPORT_H
#define RIO_TRAINER_REPORT_H

#include <stdint.h>
#include <stdio.h>

typedef struct tr_epoch_report {
	uint64_t epoch;              /* from 1 in reports                      */
	int partial;                 /* 1: the epoch so far, the run stopped in
	                              * it (--max-steps); its full line comes
	                              * when a resumed run ends the epoch     */
	uint64_t steps;              /* steps this epoch (so far)              */
	uint64_t skipped_steps;      /* of them, skipped for NaN or infinity   */
	uint64_t grad_overflows;     /* of those, for an infinity in a 16-bit
	                              * gradient sum (--grad-compression)     */
	uint64_t samples;            /* records trained on, all ranks          */
	double train_loss, train_accuracy;
	int has_test;
	double test_loss, test_accuracy;
	uint64_t test_records;
	double seconds;              /* the epoch's training time in this
	                              * process (no eval; a resumed epoch's:
	                              * since the resume)                    */
	double samples_per_s;        /* over all ranks, in those seconds       */
	double data_wait_seconds;    /* rank 0's wait for batches              */
	double gemm_seconds, gemm_gflops;
	double allreduce_seconds;    /* rank 0's time inside MPI for gradients */
	double optimizer_seconds;
	double lr;                   /* at the epoch's last step               */
	int world;
	double wall_seconds;         /* training seconds since the run began
	                              * (epochs' seconds, no evaluation)      */
	double bytes_per_step;       /* a worker's bytes sent and received a
	                              * step: under ps and hybrid its messages
	                              * (hybrid: plus the dense allreduce's);
	                              * under allreduce what a ring allreduce
	                              * of the gradients moves, 2 (W - 1) / W x
	                              * their bytes (0 on one rank)           */
	double server_bytes_per_step; /* ps, hybrid: the workers' messages a
	                              * step, all of which cross the servers'
	                              * links (W x a worker's)                */
	/* with parameter servers (--strategy ps, hybrid): what they counted */
	const char *servers;         /* the strategy's name; NULL: no servers */
	uint64_t updates, gradients, dropped_gradients;
	uint64_t staleness_max;
	double staleness_mean;
	int workers;
	const uint64_t *worker_steps; /* workers                              */
	/* model parallelism (--pipeline, --tensor): the layout ("D2xP2xT1";
	 * NULL: none), the pipeline's bubble (the ranks' idle share, every
	 * wait for a message, of the steps, each its longest rank's
	 * schedule), a step's bytes by kind (the most any rank moves) */
	const char *layout;
	double bubble, pipe_bytes, tensor_bytes, data_bytes;
	/* each rank's planned bytes (fit.h: parameters, gradients, optimizer
	 * state, activations) and its peak resident bytes (VmHWM), rank by
	 * rank: world x 2 (NULL: not said) */
	const double *memory;
} tr_epoch_report;

/* --eval-every: one copy of the parameters, evaluated */
typedef struct tr_snapshot_report {
	uint64_t epoch;              /* from 1                                 */
	uint64_t updates, gradients; /* applied since the start (allreduce: the
	                              * steps, and steps x ranks)             */
	double samples;              /* records in them                        */
	double wall_seconds;         /* training seconds then                  */
	double test_loss, test_accuracy;
} tr_snapshot_report;

void tr_report_line(FILE *f, const tr_epoch_report *r);
/* Appends one JSON line; 0 or -1 (errno set) on a write error. */
int tr_report_json(FILE *f, const tr_epoch_report *r);
/* One JSON line {"snapshot": ...}; 0 or -1. */
int tr_report_snapshot_json(FILE *f, const tr_snapshot_report *s);

#endif /* RIO_TRAINER_REPORT_H */
