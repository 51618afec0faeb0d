// Package tracing gives Mneme OpenTelemetry spans: the HTTP handlers start
// one per request, and the decorators here, which the composition root puts
// around the graph store, the embedder and the policy engine, add one per
// stage below it (policy, embed, each candidate search, each write). Spans
// are exported by OTLP over HTTP when an endpoint is configured; otherwise
// the tracer does nothing and costs next to nothing.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Tracing holds the tracer every span starts from.
type Tracing struct {
	tracer   trace.Tracer
	shutdown func(context.Context) error
}

// scope names the instrumentation in every span.
const scope = "mneme"

// New exports spans to the OTLP/HTTP endpoint (e.g.
// "http://collector:4318"), to its /v1/traces as OTEL_EXPORTER_OTLP_ENDPOINT
// means; with endpoint "" tracing is off.
func New(ctx context.Context, endpoint, service string) (*Tracing, error) {
	if endpoint == "" {
		return Off(), nil
	}
	if err := CheckEndpoint(endpoint); err != nil {
		return nil, err
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimSuffix(endpoint, "/")+"/v1/traces"))
	if err != nil {
		return nil, fmt.Errorf("otlp exporter: %w", err)
	}
	res := resource.NewSchemaless(semconv.ServiceName(service))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{tracer: tp.Tracer(scope), shutdown: tp.Shutdown}, nil
}

// CheckEndpoint reports whether endpoint is an http(s) URL.
func CheckEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("the OTLP endpoint must be an http(s) URL such as http://127.0.0.1:4318")
	}
	return nil
}

// Off returns tracing that records nothing.
func Off() *Tracing {
	return &Tracing{tracer: noop.NewTracerProvider().Tracer(scope), shutdown: func(context.Context) error { return nil }}
}

// Tracer is the tracer spans start from.
func (t *Tracing) Tracer() trace.Tracer { return t.tracer }

// Shutdown exports what is buffered and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error { return t.shutdown(ctx) }

// span starts a child span of ctx's; end it with done.
func (t *Tracing) span(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// done ends s, marking it failed when err is set.
func done(s trace.Span, err error) {
	if err != nil {
		s.RecordError(err)
		s.SetStatus(codes.Error, err.Error())
	}
	s.End()
}
