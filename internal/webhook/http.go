// Package webhook is the HTTP transport of admission reviews: it reads an
// AdmissionReview from a request, lets an admission.Handler decide, writes the
// answer in the review's own version and logs one line per review.
package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/tollgate-dev/tollgate/internal/admission"
)

// DefaultMaxBodyBytes is the largest review body accepted: the apiserver
// caps requests at 3 MiB and a review holds an object and its old version.
const DefaultMaxBodyBytes = 7 << 20

// Options configure a review endpoint.
type Options struct {
	Logger       *slog.Logger
	MaxBodyBytes int64
	// Observer, when set, is told of every review answered (metrics).
	Observer Observer
}

// Observer is told of every review an endpoint answers: its path, the
// answer, how long it took and whether the handler panicked. The metrics
// implement it; the transport does not know them.
type Observer interface {
	Observe(path string, resp admission.Response, took time.Duration, panicked bool)
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
}

type endpoint struct {
	handler admission.Handler
	opts    Options
}

// New returns the HTTP endpoint that serves h.
func New(h admission.Handler, opts Options) http.Handler {
	opts.defaults()
	return &endpoint{handler: h, opts: opts}
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpError(w, http.StatusMethodNotAllowed, "admission reviews are sent with POST")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type must be application/json, got %q", r.Header.Get("Content-Type")))
		return
	}
	if r.ContentLength > e.opts.MaxBodyBytes {
		httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body of %d bytes is over the limit of %d", r.ContentLength, e.opts.MaxBodyBytes))
		return
	}
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, e.opts.MaxBodyBytes)); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body is over the limit of %d bytes", e.opts.MaxBodyBytes))
			return
		}
		httpError(w, http.StatusBadRequest, "cannot read body: "+err.Error())
		return
	}
	reply := Respond(r.Context(), e.handler, buf.Bytes(), e.opts.Logger)
	if reply.Status != http.StatusOK {
		httpError(w, reply.Status, string(reply.Body))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	req, resp, log := &reply.Review.Request, reply.Response, reply.log
	if _, err := w.Write(reply.Body); err != nil {
		log.Warn("cannot write review response", slog.Any("error", err))
	}
	attrs := []slog.Attr{
		slog.String("path", r.URL.Path),
		slog.String("decision", resp.Decision()),
		slog.Any("policies", resp.Policies),
		slog.Int("patchOps", len(resp.Patch)),
		slog.Bool("dryRun", req.DryRun),
		slog.Float64("latencyMs", float64(time.Since(start).Microseconds())/1000),
	}
	if !resp.Allowed {
		attrs = append(attrs, slog.Int("code", int(resp.Code)), slog.String("message", resp.Message))
	}
	if len(resp.Warnings) > 0 {
		attrs = append(attrs, slog.Any("warnings", resp.Warnings))
	}
	log.LogAttrs(r.Context(), slog.LevelInfo, "review", attrs...)
	for _, x := range resp.Exempted {
		log.LogAttrs(r.Context(), slog.LevelInfo, "policy exception used", slog.String("policy", x.Policy), slog.String("exception", x.Exception))
	}
	if e.opts.Observer != nil {
		e.opts.Observer.Observe(r.URL.Path, resp, time.Since(start), reply.Panicked)
	}
}

// Reply is what the endpoint answers to one request body.
type Reply struct {
	// Status is 200 with a review in Body, or 400 with the reason in Body.
	Status   int
	Body     []byte
	Review   *admission.Review
	Response admission.Response
	Panicked bool
	log      *slog.Logger
}

// Respond decodes a review body, lets h decide and encodes the answer in the
// review's version. The server and `tollgate review` both answer through it,
// so their answers are the same bytes.
func Respond(ctx context.Context, h admission.Handler, body []byte, logger *slog.Logger) Reply {
	review, err := admission.Decode(body)
	if err != nil {
		return Reply{Status: http.StatusBadRequest, Body: []byte(err.Error())}
	}
	req := &review.Request
	log := logger.With(
		slog.String("uid", req.UID),
		slog.String("kind", req.Kind.Kind),
		slog.String("namespace", req.Namespace),
		slog.String("name", req.Name),
		slog.String("operation", string(req.Operation)),
		slog.String("user", req.UserInfo.Username),
	)
	if log.Enabled(ctx, slog.LevelDebug) {
		log.Debug("review received", slog.String("object", string(req.Object())), slog.String("oldObject", string(req.OldObject())))
	}
	resp, panicked := handle(admission.WithLogger(ctx, log), h, req)
	out, err := admission.Encode(review.APIVersion, req.UID, resp)
	if err != nil {
		resp = admission.Errored(err)
		out, _ = admission.Encode(review.APIVersion, req.UID, resp)
	}
	return Reply{Status: http.StatusOK, Body: out, Review: review, Response: resp, Panicked: panicked, log: log}
}

// handle runs the handler, turning a panic into an answer: the request is
// refused with code 500 and the server goes on.
func handle(ctx context.Context, h admission.Handler, req *admission.Request) (resp admission.Response, panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			panicked = true
			admission.LoggerFrom(ctx).Error("panic in admission handler", slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
			resp = admission.Errored(fmt.Errorf("internal error while reviewing the request: %v", v))
		}
	}()
	return h.Handle(ctx, req), false
}

func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg+"\n")
}
