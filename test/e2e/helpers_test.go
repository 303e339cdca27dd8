//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/test/e2e/framework"
)

// pod is a minimal Pod with the given labels and annotations.
var pod = framework.Pod

func env(value string) map[string]string { return map[string]string{"environment": value} }

func namespace(t *testing.T, name string, labels map[string]string) string {
	t.Helper()
	if err := ensureNamespace(name, labels); err != nil {
		t.Fatalf("namespace %s: %v", name, err)
	}
	return name
}

func createPod(t *testing.T, ns string, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	created, err := cluster.client.CoreV1().Pods(ns).Create(ctx(t), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s/%s: %v", ns, p.Name+p.GenerateName, err)
	}
	return created
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func containerNames(cs []corev1.Container) []string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return names
}

func count[T any](items []T, pred func(T) bool) int { return framework.Count(items, pred) }

// wantDenied checks err is the apiserver relaying tollgate's 403 with every fragment.
func wantDenied(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("request was allowed, want it denied")
	}
	if !apierrors.IsForbidden(err) {
		t.Errorf("error is not 403 Forbidden: %v", err)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q\ndoes not contain %q", err.Error(), f)
		}
	}
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

// stripComments drops YAML comment lines, to tell empty documents.
func stripComments(doc []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
			out = append(out, '\n')
		}
	}
	return out
}
