package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An unexpected 5xx is reported with the replicas' own log lines on it, so
// that a failed run explains itself after its work folder is gone.
func TestReportQuotesServerLogOnUnexpected5xx(t *testing.T) {
	dir := t.TempDir()
	logs := map[string]string{
		"replica-0.log": "level=INFO msg=request request_id=aaa111 status=200\n",
		"replica-1.log": "level=INFO msg=request request_id=bbb222 status=200\n" +
			"level=ERROR msg=\"request failed\" request_id=ccc333 err=\"neo4j: boom\"\n",
	}
	for name, body := range logs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec := newRecorder()
	now := time.Now()
	rec.add(call{kind: "write.agent", status: 500, start: now, end: now, detail: `{"code":"internal","message":"internal error","request_id":"ccc333"}`})
	rec.add(call{kind: "write.agent", status: 503, start: now, end: now, detail: `{"code":"unavailable","request_id":"aaa111"}`})
	rep := &report{rec: rec}
	rep.checkStatuses()
	if len(rep.failedIDs) != 1 || rep.failedIDs[0] != "ccc333" {
		t.Fatalf("failed ids %v, want only the 500's ccc333", rep.failedIDs)
	}
	rep.serverLog = serverLines(dir, rep.failedIDs, 20)
	var out strings.Builder
	rep.print(&out)
	if !strings.Contains(out.String(), `replica-1.log: level=ERROR msg="request failed" request_id=ccc333 err="neo4j: boom"`) {
		t.Errorf("the report does not quote the server's error line:\n%s", out.String())
	}
	if strings.Contains(out.String(), "aaa111 status") || !strings.Contains(out.String(), "RESULT: FAIL") {
		t.Errorf("the report quotes another request or passes:\n%s", out.String())
	}
}

func TestReportAcceptsA404OnlyOnARetriedClose(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		kind string
		ok   bool
	}{
		{kindCloseRetry, true},       // the close whose answer was lost did the work
		{kindGrantDeleteRetry, true}, // so did the grant's delete
		{"session.close", false},     // a first close must find its session
		{"grant.delete", false},
		{"delete", false},
	} {
		rec := newRecorder()
		rec.add(call{kind: tt.kind, status: 404, start: now, end: now, detail: `{"code":"not_found"}`})
		rep := &report{rec: rec}
		rep.checkStatuses()
		if rep.failed() == tt.ok {
			t.Errorf("a 404 on %s: failed = %v, want %v", tt.kind, rep.failed(), !tt.ok)
		}
	}
}
