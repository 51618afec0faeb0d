package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"
)

// proxy spreads requests round-robin over the replicas and retries nothing:
// a request sent to a dead replica fails, as it would behind a plain load
// balancer. An unreachable replica is answered 503 unavailable.
type proxy struct {
	url string
	srv *http.Server
}

// replicaHeader names the replica that answered.
const replicaHeader = "X-Chaos-Replica"

func newProxy(backends []string) (*proxy, error) {
	targets := make([]*url.URL, len(backends))
	for i, b := range backends {
		u, err := url.Parse(b)
		if err != nil {
			return nil, err
		}
		targets[i] = u
	}
	var next atomic.Uint64
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			i := int(next.Add(1)-1) % len(targets)
			r.SetURL(targets[i])
			r.Out.Header.Set(replicaHeader, strconv.Itoa(i))
		},
		// No keep-alive: net/http replays an idempotent request (a GET, or
		// a POST with an Idempotency-Key) on a reused connection that
		// broke, which would be a retry.
		Transport: &http.Transport{
			DisableKeepAlives:     true,
			DialContext:           (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
			ResponseHeaderTimeout: 60 * time.Second,
		},
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Set(replicaHeader, resp.Request.Header.Get(replicaHeader))
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set(replicaHeader, r.Header.Get(replicaHeader))
			w.Header().Set("X-Chaos-Proxy-Error", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			json.NewEncoder(w).Encode(map[string]string{"code": "unavailable", "message": "replica unreachable: " + err.Error()})
		},
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	return &proxy{url: "http://" + l.Addr().String(), srv: srv}, nil
}

func (p *proxy) close() { p.srv.Close() }
