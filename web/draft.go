package web

import (
	"cmp"
	"errors"
	"net/http"
	"slices"
	"strings"

	"mneme/memory"
	"mneme/policyadmin"
)

// Replay of a draft pasted on the Policy page.

// policyView renders the policy page with d's status (200 by default).
func (p *Panel) policyView(w http.ResponseWriter, r *http.Request, c caller, d policyData) error {
	p.render(w, r, cmp.Or(d.status, http.StatusOK), "policy", view{Title: "Policy", Caller: &c, CSRF: c.csrf, Data: d})
	return nil
}

// replayPasted replays the active revision with the pasted module in place
// of the one of the same name (or added, under a new name). The draft is
// checked as a push is checked and never stored; a refused one is shown
// on the page with the problems, the pasted text kept for editing.
func (p *Panel) replayPasted(w http.ResponseWriter, r *http.Request, c caller) error {
	if err := adminOnly(c); err != nil {
		return err
	}
	// Browsers send a textarea's lines ended with CRLF.
	source := strings.ReplaceAll(r.PostFormValue("source"), "\r\n", "\n")
	pasted := policyadmin.PolicyModule{Name: strings.TrimSpace(r.PostFormValue("module")), Source: source}
	d := policyData{DraftModule: pasted.Name, DraftSource: pasted.Source}
	st, err := p.admin.PolicyStatus(r.Context(), c.Principal)
	if err != nil {
		return err
	}
	active, err := p.admin.Policy(r.Context(), c.Principal, st.Active)
	if err != nil {
		return err
	}
	rep, err := p.admin.Replay(r.Context(), c.Principal, policyadmin.ReplayRequest{Modules: withModule(active.Modules, pasted)})
	var rejected *policyadmin.PolicyRejectedError
	var invalid *memory.InvalidError
	switch {
	case errors.As(err, &rejected):
		d.status, d.DraftError = http.StatusUnprocessableEntity, "The draft is refused ("+rejected.Code+"): "+rejected.Error()
	case errors.As(err, &invalid):
		d.status, d.DraftError = http.StatusBadRequest, "The draft is refused: "+invalid.Error()
	case err != nil:
		return err
	default:
		d.Replay = &rep
	}
	return p.policyPage(w, r, c, d)
}

// module returns the module of modules named name.
func module(modules []policyadmin.PolicyModule, name string) (policyadmin.PolicyModule, bool) {
	i := slices.IndexFunc(modules, func(m policyadmin.PolicyModule) bool { return m.Name == name })
	if i < 0 {
		return policyadmin.PolicyModule{}, false
	}
	return modules[i], true
}

// withModule returns modules with m in place of the module of its name, or
// added after them; modules is not changed.
func withModule(modules []policyadmin.PolicyModule, m policyadmin.PolicyModule) []policyadmin.PolicyModule {
	out := slices.Clone(modules)
	if i := slices.IndexFunc(out, func(x policyadmin.PolicyModule) bool { return x.Name == m.Name }); i >= 0 {
		out[i] = m
		return out
	}
	return append(out, m)
}
