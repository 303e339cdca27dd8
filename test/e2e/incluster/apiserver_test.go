//go:build e2e

package incluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// TestApiserverAwayAndBack stops the kube-apiserver twice for longer than
// the leader's lease (etcd stays) and starts it again with the same flags.
// While it is away every replica stays ready and answers reviews from what
// it knows; once it is back and the certificates the outage let come due
// are renewed, Pod creates succeed, the leader's registration repairs work
// again, and the replicas hold no more goroutines than before.
func TestApiserverAwayAndBack(t *testing.T) {
	ctx := context.Background()
	if err := framework.EnsureNamespace(ctx, env.client, "e2e-load", map[string]string{"sidecar-injection": "enabled"}); err != nil {
		t.Fatal(err)
	}
	api, err := framework.FindAPIServer(env.controlPlane, filepath.Join(env.work, "kube-apiserver.log"))
	if err != nil {
		t.Fatal(err)
	}
	env.apiserver = api

	// Warm up, so that the baseline has its connection pools and caches.
	assertLoad(t, "warm-up", 3*time.Second)
	before := scrapeAll(t)

	for round := 1; round <= 2; round++ {
		pool, err := caPool(ctx) // the CA rotates every 36s here
		if err != nil {
			t.Fatal(err)
		}
		stopped := time.Now()
		how, err := api.Stop(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: kube-apiserver %s", round, how)
		time.Sleep(6 * time.Second) // longer than the 4s lease: the leader loses it
		answered := 0
		for _, r := range env.replicas {
			if !alive(r) {
				t.Fatalf("round %d: replica %d exited while the apiserver was away", round, r.id)
			}
			// The replicas' 12-second certificates can expire while nobody
			// can renew them; that is the one reason to be unready allowed.
			if why := readiness(r); why != "ok" && !strings.HasPrefix(why, "serving certificate expired") {
				t.Errorf("round %d: replica %d not ready while the apiserver was away: %s", round, r.id, why)
			} else if why != "ok" {
				t.Logf("round %d: replica %d: %s (12s certificates, no renewal without the apiserver)", round, r.id, why)
			}
			answered += assertDirectReviews(t, r, pool, stopped)
		}
		if err := api.Start(env.client, 90*time.Second); err != nil {
			t.Fatal(err)
		}
		away := time.Since(stopped)
		if err := waitForWebhooks(60 * time.Second); err != nil {
			t.Fatal(err)
		}
		back := time.Since(stopped) - away
		renewed := waitForRenewal(t, 30*time.Second) + back
		t.Logf("round %d: apiserver away %s; %d direct reviews answered meanwhile; webhooks in effect %s and every replica's certificate renewed %s after it was ready",
			round, away.Round(100*time.Millisecond), answered, back.Round(10*time.Millisecond), renewed.Round(10*time.Millisecond))
		assertLoad(t, fmt.Sprintf("round %d", round), 4*time.Second)
		assertRegistrationRepaired(t, round)
	}

	// Leak check: the same traffic again, then the replicas' goroutines back
	// to the baseline (a leak per request, per reconnect or per leadership
	// term would show). Summed over replicas: the leader runs more than the
	// others, and leadership may have moved.
	assertLoad(t, "after", 3*time.Second)
	sum := func(m map[int]procStats) (n int) {
		for _, s := range m {
			n += s.goroutines
		}
		return n
	}
	var after map[int]procStats
	for settle := time.Now(); ; time.Sleep(time.Second) {
		after = scrapeAll(t)
		if sum(after) <= sum(before)+goroutineSlack || time.Since(settle) > 20*time.Second {
			break
		}
	}
	for id, b := range before {
		a := after[id]
		t.Logf("replica %d: goroutines %d -> %d, heap in use %.1f -> %.1f MiB, resident %.1f -> %.1f MiB",
			id, b.goroutines, a.goroutines, b.heapMiB, a.heapMiB, b.rssMiB, a.rssMiB)
	}
	if sum(after) > sum(before)+goroutineSlack {
		t.Errorf("%d goroutines in all after, %d before: a leak", sum(after), sum(before))
	}
}

// waitForRenewal waits until every replica serves a certificate that is
// not due for renewal. The test's 12-second certificates can expire, or
// come due, while the apiserver is away; the renewal is the leader's once it
// leads again, and reaches each replica through the Secret. Until then a
// replica whose certificate expires fails the apiserver's calls (a kubelet
// would take it out of the Service once /readyz says so; this test's
// EndpointSlices stay), so the load is measured from there on. It returns
// how long that took.
func waitForRenewal(t *testing.T, timeout time.Duration) time.Duration {
	t.Helper()
	return framework.WaitFor(t, timeout, "every replica serving a certificate not due for renewal", func() bool {
		for _, r := range env.replicas {
			if !alive(r) {
				continue
			}
			leaf, err := servedLeaf(r)
			if err != nil || certs.DueForRenewal(leaf, time.Now()) {
				return false
			}
		}
		return true
	})
}

// servedLeaf is the certificate a replica presents, unverified.
func servedLeaf(r *replica) (*x509.Certificate, error) {
	d := &net.Dialer{Timeout: time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", net.JoinHostPort(env.hostIP, strconv.Itoa(r.port)), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// goroutineSlack allows for HTTP connections that happen to be open when the
// metrics are read: each holds a couple of goroutines.
const goroutineSlack = 3 * 8

func assertLoad(t *testing.T, phase string, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	load := framework.StartLoad(2, func(w, i int) error {
		return createOne(ctx, fmt.Sprintf("away-%d-%d-%d", time.Now().UnixNano(), w, i), i%5 == 0)
	})
	time.Sleep(d)
	attempts, failures, first := load.Stop()
	t.Logf("%s: %d creates, %d failed", phase, attempts, failures)
	if failures != 0 {
		t.Errorf("%s: %d of %d creates failed; first: %s", phase, failures, attempts, first)
	}
}

// assertRegistrationRepaired edits the ValidatingWebhookConfiguration: the
// leader, elected again after the apiserver came back, must put it right.
func assertRegistrationRepaired(t *testing.T, round int) {
	t.Helper()
	ctx := context.Background()
	vwc := env.client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	patch := []byte(`[{"op":"replace","path":"/webhooks/0/timeoutSeconds","value":29}]`)
	if _, err := vwc.Patch(ctx, "tollgate", types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	took := framework.WaitFor(t, 30*time.Second, "the configuration repaired", func() bool {
		c, err := vwc.Get(ctx, "tollgate", metav1.GetOptions{})
		return err == nil && c.Webhooks[0].TimeoutSeconds != nil && *c.Webhooks[0].TimeoutSeconds != 29
	})
	t.Logf("round %d: timeoutSeconds edited by hand after the apiserver came back: repaired after %s", round, took.Round(10*time.Millisecond))
}

// assertDirectReviews sends a replica, without the apiserver, a Pod it must
// deny and one it must inject (the namespace's labels come from its cache).
// The certificate is verified as of when the apiserver went away: the test's
// 12-second certificates may have expired since.
func assertDirectReviews(t *testing.T, r *replica, pool *x509.CertPool, at time.Time) int {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: serviceName + "." + ns + ".svc", Time: func() time.Time { return at }},
	}}
	defer client.CloseIdleConnections()
	base := "https://" + net.JoinHostPort(env.hostIP, strconv.Itoa(r.port))
	for _, tc := range []struct {
		path, env string
		check     func(*admissionv1.AdmissionResponse) bool
	}{
		{"/validate/require-environment", "qa", func(a *admissionv1.AdmissionResponse) bool {
			return !a.Allowed && a.Result != nil && a.Result.Code == 403
		}},
		{"/mutate/nginx-sidecar", "dev", func(a *admissionv1.AdmissionResponse) bool {
			return a.Allowed && bytes.Contains(a.Patch, []byte("sidecar-nginx"))
		}},
	} {
		body := reviewBody(t, tc.env)
		resp, err := client.Post(base+tc.path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Errorf("replica %d %s: %v", r.id, tc.path, err)
			continue
		}
		var out admissionv1.AdmissionReview
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || out.Response == nil || !tc.check(out.Response) {
			t.Errorf("replica %d %s (environment=%s): HTTP %d, answer %+v (%v)", r.id, tc.path, tc.env, resp.StatusCode, out.Response, err)
		}
	}
	return 2
}

func reviewBody(t *testing.T, environment string) []byte {
	t.Helper()
	pod := framework.Pod("direct", map[string]string{"environment": environment}, nil)
	pod.Namespace = "e2e-load"
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       types.UID(fmt.Sprintf("direct-%d", time.Now().UnixNano())),
			Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Name:      "direct",
			Namespace: "e2e-load",
			Operation: admissionv1.Create,
			Object:    runtime.RawExtension{Raw: raw},
		},
	}
	body, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// readiness is a replica's /readyz answer: "ok" or why not.
func readiness(r *replica) string {
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Get(fmt.Sprintf("https://%s/readyz", net.JoinHostPort(env.hostIP, strconv.Itoa(r.port))))
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(body))
}

type procStats struct {
	goroutines      int
	heapMiB, rssMiB float64
}

func scrapeAll(t *testing.T) map[int]procStats {
	t.Helper()
	out := map[int]procStats{}
	for _, r := range env.replicas {
		if alive(r) {
			out[r.id] = scrape(t, r)
		}
	}
	return out
}

// scrape reads a replica's Go and process metrics.
func scrape(t *testing.T, r *replica) procStats {
	t.Helper()
	var s procStats
	for _, line := range strings.Split(metricsPage(t, r), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch name {
		case "go_goroutines":
			s.goroutines = int(v)
		case "go_memstats_heap_inuse_bytes":
			s.heapMiB = v / (1 << 20)
		case "process_resident_memory_bytes":
			s.rssMiB = v / (1 << 20)
		}
	}
	if s.goroutines == 0 {
		t.Fatalf("replica %d: no go_goroutines in its metrics", r.id)
	}
	return s
}
