/*
 * strategy.c — the registry of strategies: each tr_strategy (options.c
 * parses the name, the checkpoint keeps the number) to its operations.
 * The one place that lists them.
 */
#include "config.h"
#include "strategy_ops.h"

extern const tr_strategy_ops tr_allreduce_ops, tr_ps_ops, tr_hybrid_ops, tr_pipeline_ops;

const tr_strategy_ops *tr_strategy_get(tr_strategy id)
{
	static const tr_strategy_ops *const all[] = {
		[TR_STRATEGY_ALLREDUCE] = &tr_allreduce_ops,
		[TR_STRATEGY_PS] = &tr_ps_ops,
		[TR_STRATEGY_HYBRID] = &tr_hybrid_ops,
	};
	return (unsigned)id < sizeof all / sizeof *all ? all[id] : NULL;
}

const tr_strategy_ops *tr_strategy_of(const tr_options *o)
{
	if (o->pipeline > 1 || o->tensor > 1)
		return &tr_pipeline_ops;
	return tr_strategy_get(o->strategy);
}
