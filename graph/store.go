package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/config"

	"mneme/graph/neo"
)

// Config says how to reach Neo4j. An empty User means no authentication.
type Config struct {
	URI, User, Password string
	// Database is the database name; "" uses the server's default.
	Database string
	// Timeout bounds each store call, as Options.Timeout; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Logger is Options.Logger.
	Logger *slog.Logger
}

// Options tune a Store built with New.
type Options struct {
	// Database is the database name; "" uses the server's default.
	Database string
	// Timeout bounds each store call whose context has no earlier deadline;
	// it is also sent to the server as the transaction timeout. Default 15s.
	Timeout time.Duration
	// Now is the clock for the few times the store sets itself (tombstones);
	// default time.Now.
	Now func() time.Time
	// EraseBatch is how many memories EraseUser deletes per transaction;
	// default DefaultEraseBatch.
	EraseBatch int
	// Logger tells what EnsureSchema changed beyond creating what was
	// missing (an index dropped); default none.
	Logger *slog.Logger
}

// DefaultTimeout bounds a store call when neither ctx nor Options say more.
const DefaultTimeout = neo.DefaultTimeout

// Store is the Neo4j-backed store. It is safe for concurrent use.
type Store struct {
	driver neo4j.DriverWithContext
	db     string
	tx     *neo.Runner
	now    func() time.Time
	owned  bool // Close closes the driver only when Open created it
	// eraseBatch is Options.EraseBatch.
	eraseBatch int
	log        *slog.Logger
	// vector is the form of the vector index the database has, once known.
	vector atomic.Pointer[vectorIndex]
}

// Open connects to Neo4j and verifies connectivity. The returned Store owns
// its driver; Close releases it.
func Open(ctx context.Context, c Config) (*Store, error) {
	if c.URI == "" {
		return nil, errors.New("graph: Neo4j URI is required")
	}
	auth := neo4j.NoAuth()
	if c.User != "" {
		auth = neo4j.BasicAuth(c.User, c.Password, "")
	}
	driver, err := neo4j.NewDriverWithContext(c.URI, auth, func(cfg *config.Config) {
		cfg.SocketConnectTimeout = 3 * time.Second
		cfg.ConnectionAcquisitionTimeout = 10 * time.Second
		// Managed transactions retry transient errors; bound the retries so
		// an outage reaches callers as ErrUnavailable instead of hanging.
		cfg.MaxTransactionRetryTime = 5 * time.Second
	})
	if err != nil {
		return nil, fmt.Errorf("graph: neo4j driver: %w", err)
	}
	if err := driver.VerifyConnectivity(ctx); err != nil {
		_ = driver.Close(ctx)
		return nil, fmt.Errorf("graph: connect to %s: %w", c.URI, translate(err))
	}
	s := New(driver, Options{Database: c.Database, Timeout: c.Timeout, Logger: c.Logger})
	s.owned = true
	return s, nil
}

// New returns a Store over an existing driver, which the caller keeps owning:
// Close does not close it.
func New(driver neo4j.DriverWithContext, opts Options) *Store {
	// Zero or less is the default.
	opts.Timeout, opts.EraseBatch = cmp.Or(max(opts.Timeout, 0), DefaultTimeout), cmp.Or(max(opts.EraseBatch, 0), DefaultEraseBatch)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Logger = cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	return &Store{
		driver: driver, db: opts.Database, now: opts.Now, eraseBatch: opts.EraseBatch, log: opts.Logger,
		tx: neo.NewRunner(driver, opts.Database, opts.Timeout),
	}
}

// Close releases the driver if Open created it.
func (s *Store) Close(ctx context.Context) error {
	if !s.owned {
		return nil
	}
	return s.driver.Close(ctx)
}

// read runs work in a managed read transaction.
func (s *Store) read(ctx context.Context, work func(tx neo4j.ManagedTransaction) error) error {
	return s.tx.Read(ctx, work)
}

// write runs work in a managed write transaction: all of it commits or none.
// The driver retries work on transient errors, so work must be repeatable:
// it may only touch the transaction and its own local state.
func (s *Store) write(ctx context.Context, work func(tx neo4j.ManagedTransaction) error) error {
	return s.tx.Write(ctx, work)
}

// run runs work in a managed transaction bounded by timeout and ctx.
func (s *Store) run(ctx context.Context, mode neo4j.AccessMode, timeout time.Duration, work func(tx neo4j.ManagedTransaction) error) error {
	return s.tx.Run(ctx, mode, timeout, work)
}

// Runner returns the transaction runner of the store's driver and database,
// for the stores beside it (keys, the sweeps) to share.
func (s *Store) Runner() *neo.Runner { return s.tx }

// Ping checks that the database answers; readiness probes call it.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.driver.VerifyConnectivity(ctx); err != nil {
		return translate(err)
	}
	return nil
}

// answerCypher is the smallest statement there is.
const answerCypher = "RETURN 1"

// Answer runs the smallest statement there is, once (no retry), so that
// its return proves the database answered just now: Ping may only borrow a
// pooled connection, which a database stopped with SIGSTOP still seems to
// have. The stall watcher calls it; it ends when ctx does.
func (s *Store) Answer(ctx context.Context) error {
	session := s.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: s.db, AccessMode: neo4j.AccessModeRead})
	defer func() { _ = session.Close(ctx) }()
	res, err := session.Run(ctx, answerCypher, nil)
	if err == nil {
		_, err = res.Consume(ctx)
	}
	return translate(err)
}
