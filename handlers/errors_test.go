package handlers

import (
	"fmt"
	"net/http"
	"testing"

	"mneme/memory"
	"mneme/policyadmin"
)

// The errors this package maps for policy administration, whichever part
// returned them.
func TestClassifyAdminErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantCode   string
	}{
		{"not configured", fmt.Errorf("sessions: %w", memory.ErrNotConfigured), http.StatusNotImplemented, "not_configured"},
		{"policy rejected", fmt.Errorf("push: %w", &policyadmin.PolicyRejectedError{Code: policyadmin.RejectTestFailed, Problems: []string{"x"}}),
			http.StatusUnprocessableEntity, policyadmin.RejectTestFailed},
		{"replica behind", fmt.Errorf("%w: policy revisions: down", memory.ErrUnavailable), http.StatusServiceUnavailable, "unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code, _ := classify(tt.err)
			if status != tt.wantStatus || code != tt.wantCode {
				t.Errorf("classify = (%d, %q), want (%d, %q)", status, code, tt.wantStatus, tt.wantCode)
			}
		})
	}
}
