package memory

import (
	"context"
	"strconv"
	"time"
)

// Reasons a janitor changes a memory.
const (
	ReasonTTL    = "ttl"
	ReasonUnused = "unused"
	ReasonCap    = "cap"
	ReasonEnded  = "ended" // its valid_to has passed
)

// Change is one status change the janitor makes, or would make.
type Change struct {
	Tenant   string  `json:"tenant"`
	MemoryID string  `json:"memory_id"`
	UserID   string  `json:"user_id"`
	Type     string  `json:"type"`
	From     string  `json:"from"`
	To       string  `json:"to"`
	Reason   string  `json:"reason"`
	Value    float64 `json:"value,omitempty"` // for the cap: the value it was ranked by
}

// MaxReportedChanges bounds the changes a report lists; the counts are
// always complete.
const MaxReportedChanges = 1000

// SweepReport is what a janitor run did, or would do in a dry run.
type SweepReport struct {
	DryRun          bool      `json:"dry_run"`
	At              time.Time `json:"at"`
	Tenants         int       `json:"tenants"`
	Scanned         int       `json:"scanned"`
	Expired         int64     `json:"expired"`
	ArchivedUnused  int64     `json:"archived_unused"`
	ArchivedOverCap int64     `json:"archived_over_cap"`
	Changes         []Change  `json:"changes"`
	// ChangesTruncated is true when more changes were made than listed.
	ChangesTruncated bool `json:"changes_truncated"`
}

// Sweeper runs the janitor over one tenant. *janitor.Janitor implements it.
type Sweeper interface {
	Sweep(ctx context.Context, tenant string, dryRun bool) (SweepReport, error)
}

// Sweep runs the janitor over the principal's tenant now; only admins may.
// dryRun reports what it would do without changing anything. The sweep is
// recorded in the audit trail, a dry run too: it shows what an admin saw.
func (s *Service) Sweep(ctx context.Context, p Principal, dryRun bool) (r SweepReport, err error) {
	defer func() { s.audit(ctx, p, AuditJanitorSweep, "tenant:"+p.Tenant, err, SweepDetails(r, dryRun)) }()
	if err := s.require(ctx, p, ActionManage, Resource{Tenant: p.Tenant}, s.now().UTC()); err != nil {
		return SweepReport{}, err
	}
	return s.janitor.Sweep(ctx, p.Tenant, dryRun)
}

// SweepDetails are the counts of a sweep as audit details.
func SweepDetails(r SweepReport, dryRun bool) map[string]string {
	return map[string]string{"dry_run": strconv.FormatBool(dryRun), "scanned": strconv.Itoa(r.Scanned),
		"expired": strconv.FormatInt(r.Expired, 10), "archived_unused": strconv.FormatInt(r.ArchivedUnused, 10),
		"archived_over_cap": strconv.FormatInt(r.ArchivedOverCap, 10)}
}
