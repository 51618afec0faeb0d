package policy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"mneme/memory"
	"mneme/policyadmin"
)

// A policy whose read rules the pushdown cannot translate would fail every
// read once active, so checkPolicy compiles its read filter for one
// principal of each kind, with the grants and settings they are decided
// with, and refuses it when one cannot be translated.

// pushdownProbes returns a case of the bundled decision table for each
// distinct principal with its grants and settings, and an agent in a team
// (which the table lacks): every kind of principal a tenant has, with the
// data and clock its filter is compiled against. Each is tried at the
// table's time and at now, so that a rule that turns on at a date already
// past is tried as it will run.
func pushdownProbes(cases []decisionCase, now time.Time) []decisionCase {
	var out []decisionCase
	seen := map[string]bool{}
	add := func(tc decisionCase) {
		key := fmt.Sprintf("%+v|%+v|%+v|%v", tc.Principal, tc.Grants, tc.Settings, tc.Now)
		if !seen[key] {
			seen[key] = true
			out = append(out, tc)
		}
	}
	for _, tc := range cases {
		add(tc)
		at := tc
		at.Now = now
		add(at)
		if tc.Principal.Kind == memory.KindAgent && len(tc.Grants) > 0 && tc.Principal.Team == "" {
			teamed := tc
			teamed.Principal.Team = "support"
			add(teamed)
		}
	}
	return out
}

// checkPushdown compiles rev's read filter for every probe as the pushdown
// would, and returns a RejectTooSlow naming those whose compilation
// outlasts the engine's deadline, as it would at request time, or a
// RejectCompile naming each expression it cannot translate and for whom.
func (e *Engine) checkPushdown(ctx context.Context, rev *Revision) error {
	cases, err := decisionTable()
	if err != nil {
		return fmt.Errorf("policy: decision table: %w", err)
	}
	var whys, slow []string
	whom := map[string][]string{}
	for _, pr := range pushdownProbes(cases, time.Now().UTC()) {
		why, err := e.untranslatableFor(ctx, rev, pr)
		if errors.Is(err, errSlowFilter) {
			if slow = append(slow, "the read filter of "+describe(pr.Principal)); len(slow) == maxSlowProbes {
				break
			}
			continue
		}
		if err != nil {
			return err
		}
		if who := describe(pr.Principal); why != "" && !slices.Contains(whom[why], who) {
			if whom[why] == nil {
				whys = append(whys, why)
			}
			whom[why] = append(whom[why], who)
		}
	}
	if len(slow) > 0 {
		return e.tooSlow(slow)
	}
	var problems []string
	for _, why := range whys {
		problems = append(problems, fmt.Sprintf("the read policy cannot be turned into a query filter (for %s): %s", strings.Join(whom[why], ", "), why))
	}
	if len(problems) > 0 {
		return reject(policyadmin.RejectCompile, problems...)
	}
	return nil
}

// errSlowFilter is a read filter whose compilation outlasted the engine's
// deadline twice.
var errSlowFilter = errors.New("read filter too slow")

// untranslatableFor compiles rev's read filter for probe's principal,
// grants, settings and clock, under the engine's deadline (once more when
// it ran out: a busy host may delay it once), and returns what cannot be
// translated, or "", or errSlowFilter.
func (e *Engine) untranslatableFor(ctx context.Context, rev *Revision, probe decisionCase) (string, error) {
	grants, err := grantsValue(probe.Grants)
	if err != nil {
		return "", fmt.Errorf("policy: pushdown probe: %w", err)
	}
	settings, err := settingsValue(probe.Principal.Tenant, probe.Settings)
	if err != nil {
		return "", fmt.Errorf("policy: pushdown probe: %w", err)
	}
	store := inmem.NewFromObjectWithOpts(map[string]any{"grants": grants, "settings": settings}, inmem.OptReturnASTValuesOnRead(true))
	pd := newPushdown(ctx, rev.Compiler, store, slog.New(slog.DiscardHandler))
	if pd.err != nil {
		return "", reject(policyadmin.RejectCompile, "read filter: "+pd.err.Error())
	}
	for attempt := 0; ; attempt++ {
		compileCtx, cancel := context.WithTimeout(ctx, e.timeout)
		_, err = pd.compile(compileCtx, probe.Principal, probe.Now)
		expired := compileCtx.Err() != nil
		cancel()
		if !expired || ctx.Err() != nil {
			break
		}
		if attempt == 1 {
			return "", errSlowFilter
		}
	}
	switch {
	case errors.Is(err, ErrUntranslatable):
		return strings.TrimPrefix(err.Error(), ErrUntranslatable.Error()+": "), nil
	case err != nil:
		return "", outOfTime(fmt.Errorf("policy: read filter for %s: %w", describe(probe.Principal), err))
	}
	return "", nil
}

// describe names a principal in a rejection: "agent support-bot (team
// support)".
func describe(p memory.Principal) string {
	s := p.Kind + " " + p.ID
	if p.Team != "" {
		s += " (team " + p.Team + ")"
	}
	if len(p.Roles) > 0 {
		s += " (roles " + strings.Join(p.Roles, ", ") + ")"
	}
	return s
}
