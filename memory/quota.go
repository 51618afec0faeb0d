package memory

import (
	"context"
	"fmt"
	"unicode/utf8"
)

// Quota admits a write against its tenant's quotas before anything of it
// is written. memories and chars are what the write may add at most.
type Quota interface {
	Admit(ctx context.Context, tenant string, memories, chars int64) error
}

// QuotaError is a write refused because it would take its tenant past a
// quota. It names the quota and its limit, never another tenant's data.
type QuotaError struct {
	Quota string // "memories" or "content_chars"
	Limit int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("the tenant's quota of %d %s would be exceeded", e.Limit, e.Quota)
}

// admit asks the quota, if any, for room for ms.
func (s *Service) admit(ctx context.Context, tenant string, ms []Memory) error {
	return s.admitContents(ctx, tenant, len(ms), func(i int) string { return ms[i].Content })
}

// admitContents asks the quota, if any, for room for n memories whose
// contents are content(0) … content(n-1).
func (s *Service) admitContents(ctx context.Context, tenant string, n int, content func(int) string) error {
	if s.quota == nil || n == 0 {
		return nil
	}
	var chars int64
	for i := range n {
		chars += int64(utf8.RuneCountInString(content(i)))
	}
	return s.quota.Admit(ctx, tenant, int64(n), chars)
}
