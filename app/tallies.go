package app

import (
	"context"
	"log/slog"
	"time"

	"mneme/graph/tally"
)

// tallyTimeout bounds one reconciliation of every tenant's tallies.
const tallyTimeout = 10 * time.Minute

// reconcileAtStart reconciles, once when the replica starts, the tallies of
// tenants whose memories predate them (graph.EnsureSchema marks those), so
// that their census reads tallies without waiting for the janitor; then it
// idles until shutdown. Replicas starting together may each run it; the
// tallies' locks make that safe.
func (a *App) reconcileAtStart(ctx context.Context) error {
	_ = a.reconcileTallies(ctx, a.log, a.Tallies.ReconcilePending)
	<-ctx.Done()
	return nil
}

// reconcileTallies recounts tenants' tallies from their memories with
// reconcile (every tenant's when nil) and logs what it mended. A failure
// only means the census keeps counting memories for a tenant whose tallies
// were never reconciled, or keeps a drift until the next run.
func (a *App) reconcileTallies(ctx context.Context, log *slog.Logger, reconcile func(context.Context) (tally.Reconciled, error)) error {
	if reconcile == nil {
		reconcile = a.Tallies.ReconcileAll
	}
	ctx, cancel := context.WithTimeout(ctx, tallyTimeout)
	defer cancel()
	start := time.Now()
	r, err := reconcile(ctx)
	if err != nil {
		if ctx.Err() == nil {
			log.WarnContext(ctx, "reconciling the census tallies failed; the census counts memories until the next run", "err", err)
		}
		return err
	}
	if r.Tenants == 0 {
		return nil
	}
	log.InfoContext(ctx, "census tallies reconciled", "tenants", r.Tenants, "users", r.Users, "mended", r.Mended, "ms", time.Since(start).Milliseconds())
	return nil
}
