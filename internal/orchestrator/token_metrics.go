package orchestrator

import "context"

// observeTokens refreshes the token gauges (token budgets): each
// agent's total across the instance, and the sum over running workflows.
// A failed read leaves the gauges as they were; the next reconcile tries
// again.
func (r *Reconciler) observeTokens(ctx context.Context) {
	if byAgent, err := r.bb.AgentTokens(ctx); err == nil {
		for agent, n := range byAgent {
			r.m.AgentTokens.WithLabelValues(agent).Set(float64(n))
		}
	}
	wc, err := r.bb.CountWorkflows(ctx, 0)
	if err != nil {
		return
	}
	wfs, err := r.bb.GetWorkflows(ctx, wc.Running)
	if err != nil {
		return
	}
	var sum int64
	for _, w := range wfs {
		if w != nil {
			sum += w.Tokens
		}
	}
	r.m.WorkflowTokens.WithLabelValues("running").Set(float64(sum))
}
