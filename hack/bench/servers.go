package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/internal/engine"
	"github.com/tollgate-dev/tollgate/internal/policy"
	"github.com/tollgate-dev/tollgate/internal/replica"
	"github.com/tollgate-dev/tollgate/internal/server"
)

// serveTLS serves h over HTTPS/1.1 on a loopback port with the same TLS
// settings for every contender, and returns its base URL.
func serveTLS(ctx context.Context, src *certs.FileSource, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, TLSConfig: server.TLSConfig(src), ReadHeaderTimeout: 5 * time.Second,
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	return "https://" + ln.Addr().String(), nil
}

// floor is the least any Go webhook does: read the body, decode only the
// uid with encoding/json, allow.
func floor() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uid, ok := reviewUID(w, r)
		if !ok {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":` + string(uid) + `,"allowed":true}}`))
	})
}

// reviewUID reads the body and decodes only the review's uid, with
// encoding/json, encoded again for the answer; when it cannot, it answers
// the error and returns false.
func reviewUID(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	var review struct {
		Request struct {
			UID string `json:"uid"`
		} `json:"request"`
	}
	if err := json.Unmarshal(body, &review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	uid, _ := json.Marshal(review.Request.UID)
	return uid, true
}

// typical is the classic webhook: the review and the object decoded with
// k8s.io/api types, an answer encoded from them.
func typical() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		var err error
		switch review.Request.Kind.Kind {
		case "Pod":
			err = json.Unmarshal(review.Request.Object.Raw, &corev1.Pod{})
		case "Deployment":
			err = json.Unmarshal(review.Request.Object.Raw, &appsv1.Deployment{})
		}
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: err == nil}
		out, _ := json.Marshal(admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}

// tollgate is the real server's handler for a policy set, logging as it
// does in production (to nowhere).
func tollgate(set *policy.Set, src *certs.FileSource) (http.Handler, error) {
	return tollgateWith(set, engine.Options{}, src)
}

// tollgateWith is tollgate with the engine's options (params, say).
func tollgateWith(set *policy.Set, opts engine.Options, src *certs.FileSource) (http.Handler, error) {
	srv, err := server.New(server.Config{
		Routes:       replica.Routes(engine.New(set, opts)),
		Certificates: src,
		Logger:       slog.New(slog.NewJSONHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, err
	}
	return srv.Handler(), nil
}
