package neo

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// DefaultTimeout bounds a transaction when neither ctx nor the Runner say
// more.
const DefaultTimeout = 15 * time.Second

// Runner runs managed transactions on one database of a driver, which its
// caller keeps owning. It is safe for concurrent use.
type Runner struct {
	driver  neo4j.DriverWithContext
	db      string
	timeout time.Duration
	// answered is when the server last answered a transaction, in Unix
	// nanoseconds.
	answered atomic.Int64
}

// NewRunner returns a Runner over driver on database db ("" is the server's
// default) that bounds each transaction by timeout (0 means DefaultTimeout)
// or the caller's earlier deadline.
func NewRunner(driver neo4j.DriverWithContext, db string, timeout time.Duration) *Runner {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Runner{driver: driver, db: db, timeout: timeout}
}

// Read runs work in a managed read transaction.
func (r *Runner) Read(ctx context.Context, work func(tx neo4j.ManagedTransaction) error) error {
	return r.Run(ctx, neo4j.AccessModeRead, r.timeout, work)
}

// Write runs work in a managed write transaction: all of it commits or none.
// The driver retries work on transient errors, so work must be repeatable:
// it may only touch the transaction and its own local state.
func (r *Runner) Write(ctx context.Context, work func(tx neo4j.ManagedTransaction) error) error {
	return r.Run(ctx, neo4j.AccessModeWrite, r.timeout, work)
}

// Run runs work in a managed transaction bounded by timeout and ctx, and
// translates what fails.
func (r *Runner) Run(ctx context.Context, mode neo4j.AccessMode, timeout time.Duration, work func(tx neo4j.ManagedTransaction) error) error {
	if deadline, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(deadline))
	}
	if timeout <= 0 {
		return Translate(context.DeadlineExceeded)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	session := r.driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: mode, DatabaseName: r.db})
	defer session.Close(ctx)
	fn := func(tx neo4j.ManagedTransaction) (any, error) { return nil, work(tx) }
	// The server aborts the transaction at the same deadline; round up so a
	// sub-second remainder is not sent as 0 (which means "no timeout").
	txTimeout := neo4j.WithTxTimeout(max(timeout.Round(time.Second), time.Second))
	var err error
	if mode == neo4j.AccessModeRead {
		_, err = session.ExecuteRead(ctx, fn, txTimeout)
	} else {
		_, err = session.ExecuteWrite(ctx, fn, txTimeout)
	}
	var refused *neo4j.Neo4jError
	if err == nil || errors.As(err, &refused) {
		r.answered.Store(time.Now().UnixNano())
	}
	return Translate(err)
}

// Answered is when the server last answered a transaction run here,
// committed or refused by the server; zero before the first. A server that
// answers them is alive, however long its answers take.
func (r *Runner) Answered() time.Time {
	if n := r.answered.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}
